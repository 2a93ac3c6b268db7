package probes

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// An exec target is started through a watcher: soakd re-executes itself
// (/proc/self/exe, with watcherEnv set) in a session of its own, and the
// watcher makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), forks
// the target in a process group of its own, and reports on a pipe (fd 4)
// the target's PID and, once it reaped it, how it ended. It holds the read
// end of a second pipe (fd 3) whose write end only soakd holds: when that
// pipe closes (soakd released it after stopping the target, or soakd died,
// even of SIGKILL, since the kernel closes a dead process's files), the
// watcher SIGKILLs the target's group and every process below itself, and
// exits once it has reaped them all. A subreaper inherits the orphans of
// its subtree, so nothing the target starts escapes it: not a server a
// wrapper script backgrounded with &, not a daemon that double-forked
// into a session of its own. Pdeathsig alone reaches only the target.
const (
	watcherEnv  = "SOAKD_EXEC_WATCHER"
	watcherArg0 = "soakd-exec-watcher"
	// watcherKillFor bounds how long the watcher goes on killing what is
	// left below it before it exits anyway (a process stuck in the kernel,
	// state D, dies only when the kernel lets it).
	watcherKillFor = 10 * time.Second
)

// init turns any program that links this package (soakd, and the test
// binaries that start exec targets) into the watcher when soakd starts it
// as one. The environment is the switch, not an argument: a test binary
// parses its flags before TestMain could look at them.
func init() {
	if os.Getenv(watcherEnv) != "" {
		os.Exit(watch(os.Args[1:]))
	}
}

// watch is the watcher's main: args are the target's resolved path and its
// argv.
func watch(args []string) int {
	control, status := os.NewFile(3, "control"), os.NewFile(4, "status")
	if control == nil || status == nil || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "soakd: the exec watcher is started by soakd only")
		return 2
	}
	syscall.CloseOnExec(3) // the target must hold neither pipe: soakd reads
	syscall.CloseOnExec(4) // EOF on fd 4 as the watcher's exit
	_ = os.Unsetenv(watcherEnv)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(status, "error PR_SET_CHILD_SUBREAPER: %v\n", err)
		return 1
	}
	pid, err := forkTarget(args[0], args[1:])
	if err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		return 1
	}
	fmt.Fprintf(status, "pid %d\n", pid)
	empty := make(chan struct{})
	go reapBelow(pid, status, empty)
	released := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, control); close(released) }()
	select {
	case <-empty:
		return 0 // the target and all it started are gone
	case <-released:
	case <-signals:
	}
	killBelow(pid, empty)
	return 0
}

// forkTarget starts the target in a process group of its own, with
// Pdeathsig SIGKILL should the watcher itself be killed. The forking
// thread is locked and never unlocked: Pdeathsig fires when it ends.
func forkTarget(path string, argv []string) (int, error) {
	runtime.LockOSThread()
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
}

// reapBelow reaps every child of the watcher (the target, and the orphans
// of its subtree that the kernel hands the subreaper), reports the
// target's end on status, and closes empty once no child is left.
func reapBelow(target int, status io.Writer, empty chan<- struct{}) {
	defer close(empty)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return // ECHILD: nothing is left below the watcher
		case pid != target:
			continue
		case ws.Signaled():
			fmt.Fprintf(status, "exit -1 %s\n", strconv.Quote(ws.Signal().String()))
		default:
			fmt.Fprintf(status, "exit %d \"\"\n", ws.ExitStatus())
		}
	}
}

// killBelow SIGKILLs the target's process group and every process below
// the watcher, round after round (a process forked during one round is
// found in the next), until reapBelow found none left or watcherKillFor
// passed.
func killBelow(target int, empty <-chan struct{}) {
	self := int32(os.Getpid())
	deadline := time.After(watcherKillFor)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		_ = syscall.Kill(-target, syscall.SIGKILL)
		for _, pid := range descendants(newProcFS("/proc"), self) {
			_ = syscall.Kill(int(pid), syscall.SIGKILL)
		}
		select {
		case <-empty:
			return
		case <-deadline:
			return
		case <-tick.C:
		}
	}
}

// descendants lists the processes below pid, from each process's parent
// in /proc/PID/stat.
func descendants(fs *procFS, pid int32) []int32 {
	ents, err := os.ReadDir(fs.root)
	if err != nil {
		return nil
	}
	parent := map[int32]int32{}
	for _, e := range ents {
		p, err := strconv.ParseInt(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		b, err := fs.readPid(int32(p), "stat")
		if err != nil {
			continue
		}
		if st, err := parseStat(b); err == nil {
			parent[int32(p)] = st.PPID
		}
	}
	var out []int32
	for p := range parent {
		for q, n := parent[p], 0; q > 1 && n < len(parent); q, n = parent[q], n+1 {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// readPID reads the watcher's first report: the target's PID, or why it
// could not start the target.
func readPID(r *bufio.Reader) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("the exec watcher ended before it started the target (%v)", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, errors.New(msg)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	if err != nil || !strings.HasPrefix(line, "pid ") {
		return 0, fmt.Errorf("the exec watcher said %q, not the target's pid", line)
	}
	return pid, nil
}

// readExit reads the watcher's report of the target's end; Known is false
// when the watcher ended without one.
func readExit(r *bufio.Reader) ExitInfo {
	info := ExitInfo{Code: -1}
	line, err := r.ReadString('\n')
	info.Time = time.Now()
	if err != nil {
		return info
	}
	var sig string
	if n, _ := fmt.Sscanf(line, "exit %d %q\n", &info.Code, &sig); n == 2 {
		info.Signal, info.Known = sig, true
	}
	return info
}
