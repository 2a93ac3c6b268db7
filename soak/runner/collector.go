package runner

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"strings"
)

// collectorOf names the garbage-collected runtime of the target's root
// process, "" when it is none soakd knows: "Go" when its executable
// carries Go's build information, "JVM" and "Node" by its command name.
// CPython counts references and frees a request's objects as it goes (its
// split was exact), so it is not one. The analysis does not judge the
// endpoint split of such a runtime's memory (verdict.ResourceOptions.
// Collected). A runtime behind a wrapper (a shell that does not exec) is
// not seen: the root is the wrapper.
func collectorOf(pid int32, comm string) string {
	switch {
	case strings.HasPrefix(comm, "java"):
		return "JVM"
	case strings.HasPrefix(comm, "node"):
		return "Node"
	case pid > 0:
		if _, err := buildinfo.ReadFile(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
			return "Go"
		}
	}
	return ""
}

// CollectorOfPID is collectorOf for a live local process, its command
// name read from /proc (the daemon's live analysis, which knows the
// root's PID from the samples).
func CollectorOfPID(pid int32) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return collectorOf(pid, strings.TrimSpace(string(b)))
}
