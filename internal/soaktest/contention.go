package soaktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUTimes is how long a process's threads ran on a CPU and how long they
// were runnable but waiting for one (schedstat), summed over the threads.
// Threads that exited between two readings take their times with them,
// so a difference of two readings is a lower bound.
type CPUTimes struct {
	Run, Wait time.Duration
}

// SelfCPU reads this test process's CPUTimes from
// /proc/self/task/*/schedstat; ok is false when the kernel has no
// schedstat (then a test that needs the contention declines).
func SelfCPU() (c CPUTimes, ok bool) {
	dirs, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(dirs) == 0 {
		return c, false
	}
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited meanwhile
		}
		run, wait, err := parseSchedstat(string(b))
		if err != nil {
			return c, false
		}
		c.Run += run
		c.Wait += wait
	}
	return c, true
}

// parseSchedstat returns the first two fields of a schedstat line: time on
// a CPU and time waiting on a run queue, in nanoseconds.
func parseSchedstat(s string) (run, wait time.Duration, err error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("schedstat %q: want at least 2 fields", s)
	}
	r, err1 := strconv.ParseInt(f[0], 10, 64)
	w, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("schedstat %q: want integers", s)
	}
	return time.Duration(r), time.Duration(w), nil
}

// Sub is the CPU time and the wait between an earlier reading and c.
func (c CPUTimes) Sub(earlier CPUTimes) CPUTimes {
	return CPUTimes{Run: c.Run - earlier.Run, Wait: c.Wait - earlier.Wait}
}

// String reads like "ran 1.2 s, waited 0.3 s for a core".
func (c CPUTimes) String() string {
	return fmt.Sprintf("ran %.2f s, waited %.2f s for a core", c.Run.Seconds(), c.Wait.Seconds())
}
