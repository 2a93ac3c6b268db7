package probes

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// procState reads field 3 of /proc/PID/stat.
func procState(t testing.TB, pid int) byte {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseStat(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.State
}

// TestLiveStoppedTarget: a target stopped with SIGSTOP is sampled as
// alive and stopped (found by its port, so its listening socket still
// counts), and as running again after SIGCONT.
func TestLiveStoppedTarget(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := newLiveSampler(t, openLive(t, Spec{URL: "http://" + srv.addr + "/"}))
	if got := s.Sample(); !got.Alive || got.Stopped != 0 || got.RootStopped {
		t.Fatalf("running target: alive %v, stopped %d, root stopped %v; want alive, 0, false", got.Alive, got.Stopped, got.RootStopped)
	}
	if err := syscall.Kill(srv.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(srv.pid, syscall.SIGCONT) }) // before stop's SIGTERM
	waitFor(t, "state T", func() bool { return procState(t, srv.pid) == 'T' })
	got := s.Sample()
	if !got.Alive || got.Stopped != 1 || !got.RootStopped || got.RootPID != int32(srv.pid) {
		t.Errorf("stopped target: alive %v, stopped %d, root stopped %v, root %d; want alive, 1, true, %d",
			got.Alive, got.Stopped, got.RootStopped, got.RootPID, srv.pid)
	}
	if err := syscall.Kill(srv.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the target running again", func() bool { return !isStopped(procState(t, srv.pid)) })
	if got := s.Sample(); !got.Alive || got.Stopped != 0 || got.RootStopped || got.Incarnation != 1 {
		t.Errorf("continued target: alive %v, stopped %d, root stopped %v, incarnation %d; want alive, 0, false, 1",
			got.Alive, got.Stopped, got.RootStopped, got.Incarnation)
	}
}

func TestIsStopped(t *testing.T) {
	for _, c := range []struct {
		state byte
		want  bool
	}{{'T', true}, {'t', true}, {'R', false}, {'S', false}, {'D', false}, {'Z', false}, {'I', false}} {
		if got := isStopped(c.state); got != c.want {
			t.Errorf("isStopped(%q) = %v; want %v", c.state, got, c.want)
		}
	}
}
