package probes

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
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

// parentEnv makes the test binary execParent: a stand-in for soakd.
const parentEnv = "SOAKD_PROBES_EXEC_PARENT"

// execParent starts `sleep 600` as an exec target, prints its pid, and
// waits to be killed.
func execParent() int {
	tg, err := Open(context.Background(), Spec{Exec: "sleep 600"}, zap.NewNop())
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
	fmt.Println(tg.cmd.Process.Pid)
	time.Sleep(10 * time.Minute)
	return 0
}

// TestExecDiesWithSoakd kills (SIGKILL) a process that started an exec
// target: the target is gone within a second or so (Pdeathsig), and lives
// on as long as its parent does, whatever threads the parent ends.
func TestExecDiesWithSoakd(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self, "-test.run=^$")
	parent.Env = append(os.Environ(), parentEnv+"=1")
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
	time.Sleep(100 * time.Millisecond) // a signal sent as the threads ended has arrived
	if !runningPID(int32(pid)) {
		t.Fatalf("target %d ended while its parent lives", pid)
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	waitFor(t, fmt.Sprintf("target %d to die with its parent", pid), func() bool { return !runningPID(int32(pid)) })
}

// TestExecOnStart: OnStart gets the started target's identity, {pid,
// start time}, as /proc has it, and the target runs with Pdeathsig set.
func TestExecOnStart(t *testing.T) {
	port := freePort(t)
	var got []Started
	tg := openLive(t, Spec{
		Exec:    fmt.Sprintf("sh -c 'exec sleep 600' --listen 127.0.0.1:%d", port),
		OnStart: func(s Started) { got = append(got, s) },
	})
	pid := int32(tg.cmd.Process.Pid)
	if want := identity(t, pid); len(got) != 1 || got[0] != want {
		t.Errorf("OnStart got %+v; want once %+v", got, want)
	}
	if sig := tg.cmd.SysProcAttr.Pdeathsig; sig != syscall.SIGKILL {
		t.Errorf("Pdeathsig = %v; want SIGKILL", sig)
	}
}
