package sdnotify

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// DropAmbientCaps clears the ambient capability set of every thread of
// the process. The unit grants soakd CAP_SYS_PTRACE and
// CAP_DAC_READ_SEARCH through AmbientCapabilities, and ambient
// capabilities pass to every program soakd starts (--exec targets, exec
// alert sinks). After this call soakd keeps them (permitted and effective
// sets) while its children get none. Call it first thing in main.
//
// Capabilities are per thread, so it uses AllThreadsSyscall, which needs a
// binary built without cgo (CGO_ENABLED=0); with cgo (and under -race) it
// returns ENOTSUP and nothing changes. A process with no ambient
// capabilities (the usual case outside the unit) has nothing to clear, and
// gets nil whatever its build.
func DropAmbientCaps() error {
	if amb, err := ambientCaps(); err == nil && amb == 0 {
		return nil
	}
	_, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL,
		unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0)
	if errno != 0 {
		return fmt.Errorf("sdnotify: clear ambient capabilities: %w", errno)
	}
	return nil
}

// ambientCaps reads the process's ambient capability set (CapAmb in
// /proc/self/status).
func ambientCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapAmb:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no CapAmb line in /proc/self/status")
}
