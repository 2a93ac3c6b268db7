package probes

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sampler's small procfs reads (stat, status, io, a cgroup file) use
// raw system calls: they return in microseconds and never wait on I/O, so
// the runtime's entersyscall/exitsyscall pair around them buys nothing,
// and it costs. A program idle between samples has its sysmon thread in a
// deep sleep; the first ordinary system call of a sample wakes it, and it
// then polls every 20 µs until the sample ends: about five nanosleeps and
// ten context switches per sample, as much CPU as the sample's own reads
// (BenchmarkPacedSingle10ms). A raw call holds its P for its duration and
// cannot be preempted, so files whose read can take long (smaps_rollup
// walks every mapping under the mmap lock; a socket table has a line per
// socket) keep the ordinary calls (procFS.readSlow).

// rawOpen opens the NUL-terminated path in buf (read-only, close-on-exec).
func rawOpen(buf []byte) (int, error) {
	cwd := unix.AT_FDCWD // a variable: the constant is negative
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])),
			uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(fd), nil
	}
}

// rawRead reads into b.
func rawRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawClose closes fd.
func rawClose(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

// rawStat stats the NUL-terminated path in buf.
func rawStat(buf []byte, st *unix.Stat_t) error {
	cwd := unix.AT_FDCWD
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])),
		uintptr(unsafe.Pointer(st)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
