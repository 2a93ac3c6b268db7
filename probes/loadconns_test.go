package probes

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// The load's connections per process (SamplerOptions.LoadConns): a
// process's sockets whose peer is soakd's own process (here the test's)
// count, another process's connections to it do not, and one whose close
// soakd sent but the process has not read yet still counts.
func TestLiveLoadConnsPerProcess(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := twoProcessSampler(t, srv)
	root := func() Member {
		m, ok := memberOf(s.Sample(), srv.pid)
		if !ok {
			t.Fatalf("no member with the server's pid %d", srv.pid)
		}
		return m
	}
	base := root()
	if !base.LoadConnsValid {
		t.Fatalf("member %+v: LoadConnsValid false; want a reading", base)
	}
	// Another process's connection: one more fd, not the load's.
	_, port, _ := strings.Cut(srv.addr, ":")
	other := exec.Command("bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%s; sleep 60", port))
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	waitFor(t, "the other process's connection", func() bool { return root().FDs == base.FDs+1 })
	if m := root(); m.LoadConns != base.LoadConns {
		t.Fatalf("another process's connection: load_conns %d → %d; want unchanged", base.LoadConns, m.LoadConns)
	}
	const n = 5
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	waitFor(t, fmt.Sprintf("%d connections from soakd", n), func() bool {
		m := root()
		return m.FDs == base.FDs+1+n && m.LoadConns == base.LoadConns+n
	})
	// Closes in flight: a stopped server cannot read them, and holds its
	// ends (CLOSE_WAIT) while soakd's are gone from its fd table.
	if err := syscall.Kill(srv.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(srv.pid, syscall.SIGCONT) })
	// kill returns before every thread has stopped: a thread still
	// running read the closes and closed its ends (a quiet CI run: fds
	// 13, load_conns 1 at the first sample).
	waitFor(t, "every thread of the server stopped", func() bool { return allStopped(srv.pid) })
	for _, c := range conns {
		c.Close()
	}
	for i := range 3 {
		if m := root(); m.FDs != base.FDs+1+n || m.LoadConns != base.LoadConns+n {
			t.Fatalf("sample %d after soakd closed its %d connections, the server stopped: fds %d, load_conns %d; want %d and %d",
				i+1, n, m.FDs, m.LoadConns, base.FDs+1+n, base.LoadConns+n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(srv.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closes read", func() bool {
		m := root()
		return m.FDs == base.FDs+1 && m.LoadConns == base.LoadConns
	})
}

// A process that exits between the sample's fd reads and its socket dump
// (a prefork worker at its last sample) has its sockets listed as fds and
// gone from the dump: those that were soakd's connections at the previous
// sample still count as such.
func TestLiveLoadConnsOfAProcessExitingMidSample(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := twoProcessSampler(t, srv)
	root := func() Member { m, _ := memberOf(s.Sample(), srv.pid); return m }
	base := root().LoadConns // the fork's request may keep its connection
	const n = 5
	for range n {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	waitFor(t, fmt.Sprintf("%d connections from soakd", n), func() bool { return root().LoadConns == base+n })
	s.peers.beforeDump = func() {
		_ = syscall.Kill(srv.pid, syscall.SIGKILL)
		<-srv.done // reaped: its sockets are closed
	}
	m := root()
	if m.PID == 0 || m.FDs < n || m.LoadConns != base+n {
		t.Fatalf("the sample during the exit: %+v; want its %d connections to soakd counted", m, n)
	}
}

// memberOf is the member of sample with pid.
func memberOf(sample Sample, pid int) (Member, bool) {
	for _, m := range sample.Members {
		if m.PID == int32(pid) {
			return m, true
		}
	}
	return Member{}, false
}

// twoProcessSampler counts srv's connections to soakd: srv forks a child,
// since a one-process tree is not counted (TestLoadConnsOnlyInATree).
func twoProcessSampler(t *testing.T, srv *server) *Sampler {
	t.Helper()
	srv.post(t, "/ctl/fork?n=1")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{LoadConns: true, SmapsInterval: -1, Log: zaptest.NewLogger(t)})
	waitFor(t, "2 processes", func() bool { return s.Sample().Procs == 2 })
	return s
}

// TestLoadConnsOnlyInATree: a one-process tree's connections to soakd are
// not counted (no process in it can be replaced by another, which is what
// the lives rule fits, and the count costs a readlink per fd and a socket
// dump every sample); once the tree has had two processes they are, from
// then on.
func TestLoadConnsOnlyInATree(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{LoadConns: true, SmapsInterval: -1, Log: zaptest.NewLogger(t)})
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, m := range s.Sample().Members {
		if m.LoadConnsValid {
			t.Fatalf("one process: member %+v has a load_conns reading; want none", m)
		}
	}
	srv.post(t, "/ctl/fork?n=1")
	waitFor(t, "2 processes", func() bool { return s.Sample().Procs == 2 })
	waitFor(t, "the root's connection from soakd", func() bool {
		m, ok := memberOf(s.Sample(), srv.pid)
		return ok && m.LoadConnsValid && m.LoadConns >= 1 // the fork's request may hold another
	})
}

// Without SamplerOptions.LoadConns the counts are not read, and say so.
func TestLoadConnsOff(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{SmapsInterval: -1, Log: zaptest.NewLogger(t)})
	for _, m := range s.Sample().Members {
		if m.LoadConnsValid || m.LoadConns != 0 {
			t.Errorf("member %+v: a load_conns reading without the option", m)
		}
	}
}

// allStopped says whether every thread of pid is stopped (state T).
func allStopped(pid int) bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return false
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			return false
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}
