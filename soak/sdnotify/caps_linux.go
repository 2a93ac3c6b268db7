package sdnotify

import (
	"fmt"
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
// returns ENOTSUP and nothing changes.
func DropAmbientCaps() error {
	_, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL,
		unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0)
	if errno != 0 {
		return fmt.Errorf("sdnotify: clear ambient capabilities: %w", errno)
	}
	return nil
}
