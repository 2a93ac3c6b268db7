package probes

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
)

// startGroup starts `sh -c 'sleep 600 & echo $!; exec sleep 601'` in a
// process group of its own, as exec.go starts a target through a wrapper,
// and returns the leader and the member (the background sleep). Both are
// killed in t.Cleanup; the leader is reaped there.
func startGroup(t *testing.T) (leader *exec.Cmd, member int32) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $!; exec sleep 601")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	if err != nil {
		t.Fatalf("reading the member's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("member pid %q: %v", buf[:n], err)
	}
	return cmd, int32(pid)
}

func identity(t *testing.T, pid int32) Started {
	t.Helper()
	st, err := statOf(newProcFS("/proc"), pid)
	if err != nil {
		t.Fatal(err)
	}
	return Started{PID: int(pid), StartTicks: st.StartTime}
}

func TestStopOrphan(t *testing.T) {
	t.Run("another start time is another process", func(t *testing.T) {
		leader, member := startGroup(t)
		id := identity(t, int32(leader.Process.Pid))
		id.StartTicks--
		if n, err := StopOrphan("/proc", id, time.Second); n != 0 || err != nil {
			t.Errorf("StopOrphan = %d, %v; want 0, nil", n, err)
		}
		if !runningPID(int32(leader.Process.Pid)) || !runningPID(member) {
			t.Errorf("leader or member stopped; want both left alone")
		}
	})
	t.Run("the leader and its group", func(t *testing.T) {
		leader, member := startGroup(t)
		n, err := StopOrphan("/proc", identity(t, int32(leader.Process.Pid)), 10*time.Second)
		if n != 2 || err != nil {
			t.Errorf("StopOrphan = %d, %v; want 2, nil", n, err)
		}
		_ = leader.Wait()
		waitFor(t, fmt.Sprintf("member %d to end", member), func() bool { return !runningPID(member) })
	})
	t.Run("the group of a dead leader", func(t *testing.T) {
		leader, member := startGroup(t)
		id := identity(t, int32(leader.Process.Pid))
		_ = leader.Process.Kill()
		_ = leader.Wait()
		if !runningPID(member) {
			t.Fatalf("member %d ended with its leader; the test needs it to live on", member)
		}
		if n, err := StopOrphan("/proc", id, 10*time.Second); n != 1 || err != nil {
			t.Errorf("StopOrphan = %d, %v; want 1, nil", n, err)
		}
		waitFor(t, fmt.Sprintf("member %d to end", member), func() bool { return !runningPID(member) })
	})
}

// parentEnv makes the test binary execParent: a stand-in for soakd that
// starts the exec target the variable holds.
const parentEnv = "SOAKD_PROBES_EXEC_PARENT"

// execParent starts os.Getenv(parentEnv) as an exec target, prints its
// pid, and waits to be killed.
func execParent() int {
	tg, err := Open(context.Background(), Spec{Exec: os.Getenv(parentEnv)}, zap.NewNop())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Goroutines locked to threads that end make Go end those threads:
	// were the target forked from one of them, Pdeathsig would kill it now.
	for range 20 {
		done := make(chan struct{})
		go func() { runtime.LockOSThread(); close(done) }()
		<-done
	}
	fmt.Println(tg.pid)
	time.Sleep(10 * time.Minute)
	return 0
}

// startParent starts execParent with the exec target command, and returns
// it and the target's pid; both are killed in t.Cleanup.
func startParent(t *testing.T, command string) (*exec.Cmd, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self, "-test.run=^$")
	parent.Env = append(os.Environ(), parentEnv+"="+command)
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("reading the target's pid: %q, %v, %v", line, err, perr)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return parent, pid
}

// TestExecDiesWithSoakd kills (SIGKILL) a process that started an exec
// target: the target is gone within a second or so, and lives on as long
// as its parent does, whatever threads the parent ends.
func TestExecDiesWithSoakd(t *testing.T) {
	parent, pid := startParent(t, "sleep 600")
	time.Sleep(100 * time.Millisecond) // a signal sent as the threads ended has arrived
	if !runningPID(int32(pid)) {
		t.Fatalf("target %d ended while its parent lives", pid)
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	waitFor(t, fmt.Sprintf("target %d to die with its parent", pid), func() bool { return !runningPID(int32(pid)) })
}

// TestExecSurvivorsDieWithSoakd: a wrapper script that starts servers with
// & and waits for them, one of them in a session of its own (setsid: out
// of the target's process group), is SIGKILLed with the soakd that started
// it, and so is every process it started. Pdeathsig and the group's kill
// alone leave both servers running.
func TestExecSurvivorsDieWithSoakd(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "wrapper.sh")
	body := "#!/bin/sh\nsleep 600 &\necho $! >>" + pids + "\nsetsid sleep 601 &\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	parent, wrapper := startParent(t, script)
	var servers []int32
	waitFor(t, "the wrapper's servers to start", func() bool {
		servers = below(t, int32(wrapper))
		return len(servers) == 2
	})
	for _, s := range servers {
		t.Cleanup(func() { _ = syscall.Kill(int(s), syscall.SIGKILL) })
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	for _, s := range append(servers, int32(wrapper)) {
		waitFor(t, fmt.Sprintf("pid %d (%s) to die with soakd", s, Cmdline(s)), func() bool { return !runningPID(s) })
	}
}

// below lists the sleep processes below pid.
func below(t *testing.T, pid int32) []int32 {
	t.Helper()
	var out []int32
	for _, p := range descendants(newProcFS("/proc"), pid) {
		if strings.HasPrefix(Cmdline(p), "sleep ") {
			out = append(out, p)
		}
	}
	return out
}

// TestExecOnStart: OnStart gets the started target's identity, {pid,
// start time}, as /proc has it.
func TestExecOnStart(t *testing.T) {
	port := freePort(t)
	var got []Started
	tg := openLive(t, Spec{
		Exec:    fmt.Sprintf("sh -c 'exec sleep 600' --listen 127.0.0.1:%d", port),
		OnStart: func(s Started) { got = append(got, s) },
	})
	pid := int32(tg.pid)
	if want := identity(t, pid); len(got) != 1 || got[0] != want {
		t.Errorf("OnStart got %+v; want once %+v", got, want)
	}
}
