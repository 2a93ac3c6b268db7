package probes

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"go.uber.org/zap/zaptest"
)

func newLiveSampler(t testing.TB, tg *Target) *Sampler {
	return NewSampler(tg, SamplerOptions{TopN: 100, SmapsInterval: -1, SocketInterval: time.Nanosecond, Log: zaptest.NewLogger(t)})
}

func TestLiveMemoryGrowth(t *testing.T) {
	const mib = 64
	srv := startServer(t, "127.0.0.1:0")
	srv.post(t, "/ctl/alloc?mib=0") // open the control connection first
	s := newLiveSampler(t, openLive(t, Spec{PID: srv.pid}))
	before := s.Sample()
	srv.post(t, fmt.Sprintf("/ctl/alloc?mib=%d", mib))
	after := s.Sample()
	grew := float64(after.RSS) - float64(before.RSS)
	want := float64(mib << 20)
	if grew < want*0.95 || grew > want*1.05 {
		t.Errorf("RSS grew by %.1f MiB; want %d MiB within 5%%", grew/(1<<20), mib)
	}
	if !after.Alive || after.Procs != 1 || after.RootPID != int32(srv.pid) {
		t.Errorf("got alive %v, %d procs, root %d; want alive, 1 proc, root %d", after.Alive, after.Procs, after.RootPID, srv.pid)
	}
}

func TestLiveFDCount(t *testing.T) {
	const k = 17
	srv := startServer(t, "127.0.0.1:0")
	srv.post(t, "/ctl/fds?n=0")
	s := newLiveSampler(t, openLive(t, Spec{PID: srv.pid}))
	before := s.Sample()
	srv.post(t, fmt.Sprintf("/ctl/fds?n=%d", k))
	after := s.Sample()
	if !before.FDsValid || !after.FDsValid {
		t.Fatalf("FDsValid = %v, %v; want true", before.FDsValid, after.FDsValid)
	}
	if got := int(after.FDs) - int(before.FDs); got != k {
		t.Errorf("fds rose by %d (%d → %d); want exactly %d", got, before.FDs, after.FDs, k)
	}
	if after.FDLimit == 0 {
		t.Error("FDLimit = 0; want the target's soft RLIMIT_NOFILE")
	}
	if after.TCPListen != 1 || after.TCPEstablished < 1 {
		t.Errorf("TCP listen %d, established %d; want 1 and ≥ 1 (the control connection)", after.TCPListen, after.TCPEstablished)
	}
}

func TestLiveForkedChildren(t *testing.T) {
	const m = 3
	srv := startServer(t, "127.0.0.1:0")
	s := newLiveSampler(t, openLive(t, Spec{PID: srv.pid}))
	srv.post(t, fmt.Sprintf("/ctl/fork?n=%d", m))
	var got Sample
	waitFor(t, fmt.Sprintf("%d processes in the tree", m+1), func() bool {
		got = s.Sample()
		return got.Procs == m+1
	})
	var rss, fds, threads uint64
	for _, p := range got.Top {
		rss, fds, threads = rss+p.RSS, fds+p.FDs, threads+p.Threads
	}
	if len(got.Top) != m+1 || rss != got.RSS || fds != got.FDs || threads != got.Threads {
		t.Errorf("top has %d processes summing to rss %d fds %d threads %d; want %d summing to the sample's %d, %d, %d",
			len(got.Top), rss, fds, threads, m+1, got.RSS, got.FDs, got.Threads)
	}
	checkMembersSum(t, got)
	root := readStatOf(t, srv.pid)
	if got.RSS <= root.RSSPages*uint64(os.Getpagesize()) || got.Threads <= root.NumThreads {
		t.Errorf("sums rss %d threads %d do not exceed the root's own %d, %d", got.RSS, got.Threads, root.RSSPages*4096, root.NumThreads)
	}
}

func readStatOf(t *testing.T, pid int) statInfo {
	t.Helper()
	s, err := parseStat([]byte(mustRead(t, "/proc/"+strconv.Itoa(pid)+"/stat")))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLivePIDFileRestart(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "target.pid")
	first := startServer(t, "127.0.0.1:0", "--pid-file", pidFile)
	tg := openLive(t, Spec{PIDFile: pidFile})
	s := newLiveSampler(t, tg)
	if got := s.Sample(); !got.Alive || got.Incarnation != 1 || got.RootPID != int32(first.pid) {
		t.Fatalf("first: alive %v incarnation %d root %d; want true 1 %d", got.Alive, got.Incarnation, got.RootPID, first.pid)
	}
	cpuBefore := s.Sample().CPUUser + s.Sample().CPUSystem
	first.stop()
	if got := s.Sample(); got.Alive || tg.Exit() == nil {
		t.Fatalf("after stop: alive %v, exit %v; want false and an ExitInfo", got.Alive, tg.Exit())
	}
	second := startServer(t, "127.0.0.1:0", "--pid-file", pidFile)
	var got Sample
	waitFor(t, "the restarted target", func() bool { got = s.Sample(); return got.Alive })
	if got.Incarnation != 2 || got.RootPID != int32(second.pid) || tg.Exit() != nil {
		t.Errorf("after restart: incarnation %d root %d exit %v; want 2 %d nil", got.Incarnation, got.RootPID, tg.Exit(), second.pid)
	}
	if got.CPUUser+got.CPUSystem < cpuBefore {
		t.Errorf("CPU total went down across the restart: %.2f → %.2f", cpuBefore, got.CPUUser+got.CPUSystem)
	}
}

func TestLiveDefaultTargetIsPortOwner(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(listen, func(t *testing.T) {
			if strings.HasPrefix(listen, "[") {
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				ln.Close()
			}
			srv := startServer(t, listen)
			tg := openLive(t, Spec{URL: "http://" + srv.addr + "/"})
			if got := newLiveSampler(t, tg).Sample(); got.RootPID != int32(srv.pid) || got.TCPListen != 1 {
				t.Errorf("root %d listening %d; want %d and 1", got.RootPID, got.TCPListen, srv.pid)
			}
		})
	}
}

func TestLiveExec(t *testing.T) {
	port := freePort(t)
	logFile := filepath.Join(t.TempDir(), "target.log")
	tg := openLive(t, Spec{
		Exec:    fmt.Sprintf("%s --listen 127.0.0.1:%d --max-lifetime 10m", soaktest.Binary(t, soaktest.Target), port),
		URL:     fmt.Sprintf("http://127.0.0.1:%d/", port),
		ExecLog: logFile, ReadyTimeout: 30 * time.Second,
	})
	got := newLiveSampler(t, tg).Sample()
	if !got.Alive || got.Incarnation != 1 || got.TCPListen != 1 {
		t.Errorf("alive %v incarnation %d listening %d; want true 1 1", got.Alive, got.Incarnation, got.TCPListen)
	}
	if d := tg.Describe(); !strings.HasPrefix(d, "started pid ") {
		t.Errorf("Describe() = %q; want \"started pid ...\"", d)
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e := tg.Exit()
	if e == nil || !e.Known || e.Code != 0 || e.Signal != "" {
		t.Errorf("Exit() = %+v; want a known clean exit (code 0, no signal) after SIGTERM", e)
	}
	if processExists(int(got.RootPID)) {
		t.Errorf("pid %d still exists after Close; want it reaped", got.RootPID)
	}
}

func TestLiveExecNeverReady(t *testing.T) {
	port := freePort(t)
	_, err := Open(context.Background(), Spec{
		Exec: soaktest.Binary(t, soaktest.Target) + " --listen 127.0.0.1:0 --max-lifetime 10m", // listens elsewhere
		URL:  fmt.Sprintf("http://127.0.0.1:%d/", port), ReadyTimeout: time.Second,
	}, zaptest.NewLogger(t))
	m := regexp.MustCompile(`pid (\d+) did not accept connections on 127\.0\.0\.1:\d+ within 1s \(target\.ready_timeout\); stopped it$`).FindStringSubmatch(errText(err))
	if m == nil {
		t.Fatalf("err = %v; want a readiness timeout naming the pid", err)
	}
	if pid, _ := strconv.Atoi(m[1]); processExists(pid) {
		t.Errorf("pid %d still exists; want it stopped and reaped", pid)
	}
}

func TestLiveGoneTarget(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	tg := openLive(t, Spec{PID: srv.pid})
	s := newLiveSampler(t, tg)
	if !s.Sample().Alive {
		t.Fatal("not alive at first")
	}
	srv.post(t, "/ctl/exit?code=3")
	<-srv.done
	got := s.Sample()
	e := tg.Exit()
	if got.Alive || e == nil || e.Known {
		t.Errorf("alive %v exit %+v; want false and an ExitInfo with unknown status", got.Alive, e)
	}
	if again := s.Sample(); again.Alive || again.Incarnation != 1 || again.CPUUser != got.CPUUser {
		t.Errorf("later sample: alive %v incarnation %d cpu %.2f; want false 1 %.2f", again.Alive, again.Incarnation, again.CPUUser, got.CPUUser)
	}
}

func TestLiveMatch(t *testing.T) {
	dir := t.TempDir()
	token := regexp.QuoteMeta(dir)
	_, err := Open(context.Background(), Spec{Match: token}, zaptest.NewLogger(t))
	if want := "0 root processes match"; !strings.Contains(errText(err), want) {
		t.Errorf("no match: err = %v; want it to contain %q", err, want)
	}
	a := startServer(t, "127.0.0.1:0", "--pid-file", filepath.Join(dir, "a.pid"))
	tg := openLive(t, Spec{Match: token})
	if got := newLiveSampler(t, tg).Sample(); got.RootPID != int32(a.pid) {
		t.Errorf("one match: root %d; want %d", got.RootPID, a.pid)
	}
	b := startServer(t, "127.0.0.1:0", "--pid-file", filepath.Join(dir, "b.pid"))
	_, err = Open(context.Background(), Spec{Match: token}, zaptest.NewLogger(t))
	for _, want := range []string{"2 root processes match", fmt.Sprintf("pid %d (", a.pid), fmt.Sprintf("pid %d (", b.pid)} {
		if !strings.Contains(errText(err), want) {
			t.Errorf("two matches: err = %v; want it to contain %q", err, want)
		}
	}
}

// A target started through a wrapper leaves a process in its group when
// SIGTERM ends the leader: Close stops the whole group, so nothing soakd
// started outlives it.
func TestLiveExecStopsTheWholeGroup(t *testing.T) {
	port := freePort(t)
	tg := openLive(t, Spec{
		Exec:         fmt.Sprintf("sh -c 'sleep 600 & exec %s --listen 127.0.0.1:%d --max-lifetime 10m'", soaktest.Binary(t, soaktest.Target), port),
		URL:          fmt.Sprintf("http://127.0.0.1:%d/", port),
		ReadyTimeout: 30 * time.Second, StopGrace: 30 * time.Second,
	})
	s := newLiveSampler(t, tg)
	var sleeper int32
	waitFor(t, "the sleep child in the tree", func() bool {
		for _, p := range s.Sample().Top {
			if p.Name == "sleep" {
				sleeper = p.PID
			}
		}
		return sleeper != 0
	})
	t.Cleanup(func() { _ = syscall.Kill(int(sleeper), syscall.SIGKILL) })
	if err := tg.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitFor(t, fmt.Sprintf("pid %d (sleep) to end", sleeper), func() bool { return !runningPID(sleeper) })
}

// runningPID says whether pid is a process that has not exited (a zombie
// has).
func runningPID(pid int32) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s, err := parseStat(b)
	return err == nil && s.State != 'Z' && s.State != 'X'
}
