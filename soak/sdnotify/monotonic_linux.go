package sdnotify

import "golang.org/x/sys/unix"

// monotonicUsec reads CLOCK_MONOTONIC in microseconds, as systemd expects
// in MONOTONIC_USEC.
func monotonicUsec() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Sec*1e6 + ts.Nsec/1e3
}
