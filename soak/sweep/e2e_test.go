package sweep_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/sweep"
)

// The sweep end to end against servers with a known knee: each case is a
// short ladder (0.3–2.5 s a level, 2 to 4 levels). Under -race with a
// load average of 30 on 2 cores the set took 49 s, of which about 2–3 s
// per level is runner.Run's own (preflight, sampling, analysis).

func TestMain(m *testing.M) { os.Exit(soaktest.Main(m)) }

var zoo struct {
	once sync.Once
	bin  string
	err  error
}

// zooBinary compiles testdata/sweepzoo/sweepzoo.c once.
func zooBinary(t *testing.T) string {
	t.Helper()
	zoo.once.Do(func() {
		zoo.bin = filepath.Join(soaktest.Dir(t), "sweepzoo")
		src := filepath.Join("..", "..", "testdata", "sweepzoo", "sweepzoo.c")
		out, err := exec.Command("cc", "-O2", "-pthread", "-o", zoo.bin, src).CombinedOutput()
		if err != nil {
			zoo.err = fmt.Errorf("cc %s: %v\n%s", src, err, out)
		}
	})
	if zoo.err != nil {
		t.Fatal(zoo.err)
	}
	return zoo.bin
}

// ladder is the shape of one test sweep.
type ladder struct {
	levels  []int
	level   time.Duration
	timeout time.Duration
}

// sweepOf sweeps the server at url (process pid) up the ladder.
func sweepOf(t *testing.T, url string, pid int, l ladder) *sweep.Report {
	t.Helper()
	o := sweep.Options{
		Run: runner.Options{
			Load:    load.Options{Endpoints: []load.Endpoint{{URL: url}}, KeepAlive: true, Timeout: l.timeout},
			Target:  probes.Spec{PID: pid, URL: url},
			Sampler: probes.SamplerOptions{ThreadInterval: 250 * time.Millisecond},
			Log:     zaptest.NewLogger(t),
		},
		Levels: l.levels, LevelDuration: l.level,
	}
	rep, err := sweep.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	return rep
}

// skipIfMachineFull skips a test whose server should not be short of
// CPU when the sweep found something else and the machine's cores were
// all busy at a level, or its threads waited for a core: the pace was the
// machine's other work, not the server's.
func skipIfMachineFull(t *testing.T, rep *sweep.Report, want string) {
	t.Helper()
	if rep.Knee.Cause == want {
		return
	}
	for _, l := range rep.Levels {
		c := l.CPU
		if full := c.HostCPUs > 0 && c.HostUtilization >= 0.9*float64(c.HostCPUs); full || c.CPUWaitFraction >= 0.1 {
			t.Skipf("the machine was too busy at %d clients (%.2f of %d cores busy, the target waited for a core %.0f %% of the time): the sweep found %s (%s)",
				l.Concurrency, c.HostUtilization, c.HostCPUs, 100*c.CPUWaitFraction, rep.Knee.Cause, rep.Knee.Reason)
		}
	}
}

func wantCause(t *testing.T, rep *sweep.Report, causes ...string) {
	t.Helper()
	if !slices.Contains(causes, rep.Knee.Cause) {
		t.Errorf("knee cause = %s (%s); want one of %v", rep.Knee.Cause, rep.Knee.Reason, causes)
	}
}

// TestSweepCPU: one select() thread burning 2 ms of CPU a request
// saturates at one core: cpu.
func TestSweepCPU(t *testing.T) {
	srv := soaktest.StartServer(t, zooBinary(t), "--max-lifetime", "120", "--mode", "burn", "--burn-us", "2000")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{1, 2}, level: 700 * time.Millisecond, timeout: 10 * time.Second})
	skipIfMachineFull(t, rep, sweep.CauseCPU)
	top := rep.Levels[len(rep.Levels)-1]
	if rep.Knee.Cause != sweep.CauseCPU && top.CPU.RunqueueWaitSeconds >= 0.1*top.CPU.ResponseSeconds {
		t.Skipf("the machine was too busy: the server's thread waited for a core %.0f %% of each request, so its throughput followed the machine's other work (%s)",
			100*top.CPU.RunqueueWaitSeconds/top.CPU.ResponseSeconds, top.CPU.Reason)
	}
	wantCause(t, rep, sweep.CauseCPU)
}

// TestSweepListenQueue: a backlog of 1 and an accept loop that stalls
// 300 ms every second drops the other clients' SYNs in each stall; their
// retransmits a second later make a 1 s latency mode (or 2 s, when the
// first retransmit found the next stall).
func TestSweepListenQueue(t *testing.T) {
	srv := soaktest.StartServer(t, zooBinary(t), "--max-lifetime", "120", "--mode", "backlog",
		"--delay-ms", "0", "--stall-ms", "300", "--stall-every-ms", "1000")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{1, 8}, level: 2500 * time.Millisecond, timeout: 10 * time.Second})
	wantCause(t, rep, sweep.CauseListenQueue)
	top := rep.Levels[len(rep.Levels)-1]
	// The first retransmit comes after 1 s; when it lands in the next
	// stall, the next one (2 s with linear timeouts, else 3 s) is the mode.
	if top.ListenOverflows > 0 && len(top.SynModes) == 0 && top.Max < 0.9 {
		// The clients keep their connections: the handshakes dropped
		// when they opened, in the level's warm-up, and no measured
		// request waited for a retransmit.
		t.Skipf("at %d clients: %d overflows, but no measured request waited for a retransmit (max %.3g s): the drops fell in the level's warm-up", top.Concurrency, top.ListenOverflows, top.Max)
	}
	if c := top.CPU; top.ListenOverflows > 0 && len(top.SynModes) == 0 &&
		(c.HostCPUs > 0 && c.HostUtilization >= 0.9*float64(c.HostCPUs) || c.CPUWaitFraction >= 0.1) {
		// On a full machine the server's one thread waits for a core
		// after each retransmit as well, and the retransmits' latencies
		// smear past their band (1 s + up to 0.5 s).
		t.Skipf("the machine was too busy at %d clients (%.2f of %d cores busy, the server waited for a core %.0f %% of the time): %d overflows, no latency mode (p99 %.3g s, max %.3g s)",
			top.Concurrency, c.HostUtilization, c.HostCPUs, 100*c.CPUWaitFraction, top.ListenOverflows, top.P99, top.Max)
	}
	if top.ListenOverflows == 0 || len(top.SynModes) == 0 || top.SynModes[0] > 3 {
		t.Errorf("at %d clients: %d overflows, latency modes %v (%d requests, p50 %.3g s, p99 %.3g s, p99.9 %.3g s, max %.3g s); want drops counted and a mode at 1 s (or the next retransmit's)",
			top.Concurrency, top.ListenOverflows, top.SynModes, top.Requests, top.P50, top.P99, top.P999, top.Max)
	}
}

// TestSweepFDLimit: a thread per connection with RLIMIT_NOFILE 100 stops
// at 100 fds; the ceiling projected from the fds per connection is near
// 94 connections (6 fds are the server's own).
func TestSweepFDLimit(t *testing.T) {
	srv := soaktest.StartServer(t, zooBinary(t), "--max-lifetime", "120", "--mode", "threads", "--delay-ms", "20", "--max-fds", "100")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{20, 40, 60, 150}, level: 700 * time.Millisecond, timeout: 3 * time.Second})
	// Under bench/busy.sh at load 16 the server, starved, accepted none of
	// the 150 clients within the level (all 150 in its accept queue, its
	// fds at 67 of 100, 0 req/s): the wall was never reached.
	skipIfMachineFull(t, rep, sweep.CauseFDLimit)
	wantCause(t, rep, sweep.CauseFDLimit)
	pc := rep.PerConnection
	if pc.FDLimit != 100 || pc.CeilingConnections < 85 || pc.CeilingConnections > 100 {
		t.Errorf("per connection = %.2f fds, limit %d, ceiling %.0f connections; want the limit 100 reached near 94 connections", pc.FDs, pc.FDLimit, pc.CeilingConnections)
	}
	if !strings.Contains(rep.Knee.Reason, "RLIMIT_NOFILE 100") {
		t.Errorf("reason = %q; want it to name the fd limit", rep.Knee.Reason)
	}
}

// TestSweepSelect: a select() server stops at 1023 fds; the ceiling
// projected from the fds per connection is near 1020 connections.
func TestSweepSelect(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("1100 connections do not open within a level under the race detector on a 2-core machine (nor fit -short); bench/sweep.sh runs this server")
	}
	if lim, _ := sweep.RaiseFDLimit(); lim < 1100+200 {
		t.Skipf("the test's fd limit (%d) is too low for 1100 clients", lim)
	}
	srv := soaktest.StartServer(t, zooBinary(t), "--max-lifetime", "120", "--mode", "select", "--delay-ms", "200")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{100, 300, 600, 1100}, level: 2 * time.Second, timeout: 3 * time.Second})
	wantCause(t, rep, sweep.CauseFDLimit)
	pc := rep.PerConnection
	if pc.FDLimit != 1024 || pc.CeilingConnections < 900 || pc.CeilingConnections > 1100 {
		t.Errorf("per connection = %.2f fds, limit %d, ceiling %.0f connections; want the limit 1024 reached near 1020 connections", pc.FDs, pc.FDLimit, pc.CeilingConnections)
	}
	if wall := rep.Levels[len(rep.Levels)-1]; wall.FDs < 1015 || wall.FDs > 1023 || !strings.Contains(rep.Knee.Reason, fmt.Sprintf("stopped at %d, select()'s FD_SETSIZE", wall.FDs)) {
		t.Errorf("fds at %d clients = %d, reason %q; want them stopped at about 1023, said so", wall.Concurrency, wall.FDs, rep.Knee.Reason)
	}
}

// TestSweepPerConnection: a thread per connection that sleeps 20 ms
// before each answer scales with the clients while it idles.
func TestSweepPerConnection(t *testing.T) {
	srv := soaktest.StartServer(t, zooBinary(t), "--max-lifetime", "120", "--mode", "threads", "--delay-ms", "20")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{1, 4, 10}, level: 700 * time.Millisecond, timeout: 10 * time.Second})
	skipIfMachineFull(t, rep, sweep.CausePerConnection)
	wantCause(t, rep, sweep.CausePerConnection)
	if rep.Knee.Concurrency != 0 {
		t.Errorf("knee at %d clients; want none within the ladder", rep.Knee.Concurrency)
	}
	if s := rep.Suggestion; s.Concurrency != 10 || !strings.HasPrefix(s.Command, "soakd run -c 10 --rate ") {
		t.Errorf("suggestion = %+v; want a soak at the top level", s)
	}
}

// TestSweepSerial: one select() thread with listen(2) that sleeps 5 ms
// per request serves one request at a time: at most 200 req/s at about
// 1 % of a core whatever the clients. Its knee is at 1 client, serial,
// confirmed by two levels past the throughput's knee (at 1 client, or at
// 2 when one client leaves the server idle over soakd's turnaround), and
// the soak suggested is at 1 client under the throughput measured there.
func TestSweepSerial(t *testing.T) {
	srv := soaktest.StartServer(t, zooBinary(t), "--max-lifetime", "120", "--mode", "serial", "--delay-ms", "5")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{1, 2, 4, 8}, level: 700 * time.Millisecond, timeout: 10 * time.Second})
	// Under bench/busy.sh (a busy loop per core at nice -5) the server's
	// thread waited for a core about two thirds of each request: 60 req/s
	// where 5 ms a request allows 200, and one client alone 0.3 × 1/60 s.
	// The machine set the pace, and the sweep says so (cpu, the target
	// short of CPU): skipped, as for the other servers.
	skipIfMachineFull(t, rep, sweep.CauseSerial)
	wantCause(t, rep, sweep.CauseSerial)
	if k := rep.Knee; k.Concurrency != 1 || !k.Confirmed || !strings.Contains(k.Reason, "one request at a time") {
		t.Errorf("knee = %+v; want serial at 1 client, confirmed", k)
	}
	first := rep.Levels[0]
	if s := rep.Suggestion; s.Concurrency != 1 || s.Rate <= 0 || s.Rate > first.Throughput || !strings.HasPrefix(s.Command, "soakd run -c 1 --rate ") {
		t.Errorf("suggestion = %+v; want 1 client at a rate under the %.0f req/s measured there", s, first.Throughput)
	}
}

// TestSweepThreadedPython: a thread per connection under one GIL. Its
// knee moves with the machine's load, so the test holds what holds on
// any machine: one knee (the stop names the report's), a server that
// uses a core is not serial, and the soak suggested is at or under the
// knee's concurrency and throughput.
func TestSweepThreadedPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	srv := soaktest.StartServer(t, py, filepath.Join("..", "..", "testdata", "sweepzoo", "threaded.py"), "--max-lifetime", "120")
	rep := sweepOf(t, srv.URL, srv.PID, ladder{levels: []int{1, 2, 5, 10}, level: 700 * time.Millisecond, timeout: 10 * time.Second})
	k, s := rep.Knee, rep.Suggestion
	if rep.Stopped != "" && strings.Contains(rep.Stopped, "past the knee") && !strings.Contains(rep.Stopped, fmt.Sprintf("past the knee at %d client", k.Concurrency)) {
		t.Errorf("stopped %q, knee at %d; want one knee", rep.Stopped, k.Concurrency)
	}
	if k.Cause == sweep.CauseSerial && rep.Levels[len(rep.Levels)-1].CPU.Utilization >= 0.5 {
		t.Errorf("knee = %+v; want no serial cause for a server using a core", k)
	}
	at := rep.Levels[len(rep.Levels)-1]
	for _, l := range rep.Levels {
		if l.Concurrency == k.Concurrency {
			at = l
		}
	}
	if s.Concurrency != at.Concurrency || s.Rate > at.Throughput {
		t.Errorf("suggestion = %+v; want %d clients under the %.0f req/s measured at the knee", s, at.Concurrency, at.Throughput)
	}
}

// TestSweepNginx: nginx with one worker answering from memory has no
// knee within a small ladder, or is CPU-bound.
func TestSweepNginx(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian nginx-light)")
		}
	}
	url, pid := startNginx(t, bin)
	rep := sweepOf(t, url, pid, ladder{levels: []int{1, 3}, level: 700 * time.Millisecond, timeout: 10 * time.Second})
	if rep.Knee.Cause == sweep.CauseClient {
		t.Skipf("soakd itself was the limit: on this machine it shares the cores with nginx (%s)", rep.Knee.Reason)
	}
	if rep.Knee.Cause == sweep.CauseContention && !rep.USL.OK {
		t.Skipf("two levels cannot tell a serial section from nginx and soakd sharing 2 cores (no USL fit): %s", rep.Knee.Reason)
	}
	// per_connection is "no knee within the ladder" with the reason
	// that each connection, not the server, set the pace: nginx grew
	// 2.3 times from 1 to 3 clients at 40 % of the cores in one run here.
	wantCause(t, rep, sweep.CauseNone, sweep.CauseCPU, sweep.CausePerConnection)
}

// startNginx runs nginx in the foreground on a free loopback port with
// its files in a temporary directory, and returns its URL and master PID.
func startNginx(t *testing.T, bin string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nginx cannot listen on port 0: a port just freed is taken
	conf := fmt.Sprintf(`daemon off; master_process on; worker_processes 1; pid %[1]s/nginx.pid;
error_log %[1]s/error.log; events { worker_connections 1024; }
http { access_log off; client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s;
uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
server { listen %[2]s; location / { return 200 "ok\n"; } } }
`, dir, addr)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", path, "-p", dir, "-e", filepath.Join(dir, "error.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	soaktest.Reap(t, cmd)
	soaktest.WaitFor(t, 10*time.Second, "nginx to listen on "+addr, func() bool {
		c, err := net.Dial("tcp4", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/", cmd.Process.Pid
}

// TestSweepExec starts the target once for the whole ladder (--exec) and
// stops it at the end.
func TestSweepExec(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // the target binds it again
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	var started []int
	o := sweep.Options{
		Run: runner.Options{
			Load: load.Options{Endpoints: []load.Endpoint{{URL: url}}, KeepAlive: true, Timeout: 5 * time.Second},
			Target: probes.Spec{URL: url, Exec: fmt.Sprintf("%s --mode threads --delay-ms 5 --max-lifetime 60 --port %d --port-file %s",
				zooBinary(t), port, filepath.Join(t.TempDir(), "port")), OnStart: func(s probes.Started) { started = append(started, s.PID) }},
			Log: zaptest.NewLogger(t),
		},
		Levels: []int{1, 2}, LevelDuration: 300 * time.Millisecond,
	}
	rep, err := sweep.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || len(rep.Levels) != 2 || !strings.Contains(rep.Target, "sweepzoo") {
		t.Fatalf("started %v, %d levels, target %q; want one start for both levels, named", started, len(rep.Levels), rep.Target)
	}
	if err := syscall.Kill(started[0], 0); err == nil {
		t.Errorf("pid %d still runs after the sweep; want it stopped", started[0])
	}
	if !strings.Contains(rep.Suggestion.Command, "--exec '") {
		t.Errorf("suggestion %q; want the --exec target in it", rep.Suggestion.Command)
	}
}
