package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/config"
)

// TestMain runs up to 4 parallel tests at once: the parallel ones wait on
// daemons, schedules, Alertmanager and Prometheus, or do store work with
// no clock in it (the streamed samples), which then uses the cores the
// waiting leaves idle. The sequential tests (the browser's, whose page
// must be caught while the run lasts, among them) all run before them.
// TestLeakAcrossRuns, the longest, is the last to pause, and so in
// practice the first to continue: keep the tests after it sequential.
func TestMain(m *testing.M) {
	soaktest.Parallel(4)
	os.Exit(soaktest.Main(m))
}

// target is a spawned testdata/target process.
type target struct {
	addr    string // host:port
	pidFile string
}

// startTarget starts the test target with extra flags and a pid file
// (soaktest.StartServer); it is stopped and reaped in t.Cleanup.
func startTarget(t *testing.T, flags ...string) target {
	t.Helper()
	tg := target{pidFile: filepath.Join(t.TempDir(), "target.pid")}
	args := append([]string{"--listen", "127.0.0.1:0", "--pid-file", tg.pidFile, "--max-lifetime", "10m"}, flags...)
	tg.addr = soaktest.StartServer(t, soaktest.Binary(t, soaktest.Target), args...).Addr
	return tg
}

func killAndReap(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	soaktest.WaitFor(t, timeout, what, cond)
}

// jobSpec is one job of a test config.
type jobSpec struct {
	name     string
	schedule string // default "@every 1h"
	target   target
	duration time.Duration // load duration; default 3s
	rate     float64       // default 50
	alerts   []string
}

func (j jobSpec) yaml() string {
	if j.schedule == "" {
		j.schedule = "@every 1h"
	}
	if j.duration == 0 {
		j.duration = 3 * time.Second
	}
	if j.rate == 0 {
		j.rate = 50
	}
	al := ""
	if len(j.alerts) > 0 {
		al = "    alerts: [" + strings.Join(j.alerts, ", ") + "]\n"
	}
	return fmt.Sprintf(`  - name: %s
    schedule: %q
    max_duration: 5m
%s    target:
      pidfile: %s
    load:
      url: http://%s/
      rate: %g
      concurrency: 2
      duration: %s
      timeout: 5s
    sampling:
      interval: 200ms
      smaps_interval: 1s
    phases:
      warmup: "0"
`, j.name, j.schedule, al, j.target.pidFile, j.target.addr, j.rate, j.duration)
}

// configYAML returns a config with the given state dir, extra top-level
// YAML and jobs.
func configYAML(stateDir, extra string, jobs ...jobSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: 127.0.0.1:0\nstate_dir: %s\nlog_level: debug\n%s", stateDir, extra)
	b.WriteString("jobs:\n")
	for _, j := range jobs {
		b.WriteString(j.yaml())
	}
	return b.String()
}

func writeConfig(t *testing.T, path, yaml string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

func parseConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	return cfg
}

// testDaemon is a daemon running in the test process.
type testDaemon struct {
	*Daemon
	url string
}

// startDaemon runs a daemon on 127.0.0.1:0 until the test ends.
func startDaemon(t *testing.T, cfg *config.Config, o Options) *testDaemon {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Listener = ln
	if o.Log == nil {
		o.Log = zaptest.NewLogger(t)
	}
	if o.LiveInterval == 0 {
		o.LiveInterval = 500 * time.Millisecond
	}
	if o.LiveGateLooks == 0 {
		o.LiveGateLooks = 1 // a look every second or less: the tests' runs are short
	}
	if o.LiveGateMinSoak == 0 {
		o.LiveGateMinSoak = time.Nanosecond
	}
	d, err := New(cfg, o)
	if err != nil {
		ln.Close()
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("Run did not return 60 s after cancel")
		}
	})
	td := &testDaemon{Daemon: d, url: "http://" + ln.Addr().String()}
	waitFor(t, 30*time.Second, "/readyz", func() bool {
		code, _ := httpDo(t, "GET", td.url+"/readyz", "", nil)
		return code == http.StatusOK
	})
	return td
}

// httpDo makes a request and returns the status and body.
func httpDo(t *testing.T, method, url, token string, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// getJSON GETs url and decodes the JSON body into v; it fails on a status
// other than 200.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	code, b := httpDo(t, "GET", url, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d; want 200: %s", url, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, b)
	}
}

// startRun POSTs a run of job and returns its ID.
func startRun(t *testing.T, base, job, token string) int64 {
	t.Helper()
	code, b := httpDo(t, "POST", base+"/api/v1/jobs/"+job+"/runs", token, nil)
	if code != http.StatusAccepted {
		t.Fatalf("POST run of %s: status %d; want 202: %s", job, code, b)
	}
	var r struct {
		RunID int64 `json:"run_id"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.RunID == 0 {
		t.Fatalf("POST run of %s: %v: %s", job, err, b)
	}
	return r.RunID
}

// runInfo is the part of a store.Run the tests read.
type runInfo struct {
	ID       int64  `json:"id"`
	Job      string `json:"job"`
	Status   string `json:"status"`
	Trigger  string `json:"trigger"`
	Verdict  string `json:"verdict"`
	Error    string `json:"error"`
	Requests uint64 `json:"requests"`
}

// runStatus returns the run's status from GET /api/v1/runs.
func runStatus(t *testing.T, base, job string, id int64) runInfo {
	t.Helper()
	var runs []runInfo
	getJSON(t, base+"/api/v1/runs?job="+job+"&limit=100", &runs)
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("run %d not in GET /api/v1/runs?job=%s: %+v", id, job, runs)
	return runInfo{}
}

// sampleCount returns how many samples GET /api/v1/runs/{id}/samples has.
func sampleCount(t *testing.T, base string, id int64) int {
	t.Helper()
	var recs []json.RawMessage
	getJSON(t, base+"/api/v1/runs/"+strconv.FormatInt(id, 10)+"/samples", &recs)
	return len(recs)
}

// soakdProc is a real `soakd serve` process.
type soakdProc struct {
	cmd  *exec.Cmd
	url  string
	logs *logTail
}

// logTail collects a process's JSON log lines.
type logTail struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func (l *logTail) read(r io.Reader) {
	defer close(l.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		l.mu.Unlock()
	}
}

// find returns the first log line whose msg is msg, decoded.
func (l *logTail) find(msg string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	return nil
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startSoakd starts `soakd serve --config cfgPath` with env added, and
// waits until it logs that it serves; it is killed and reaped in
// t.Cleanup unless the test waited for it.
func startSoakd(t *testing.T, cfgPath string, env ...string) *soakdProc {
	t.Helper()
	cmd := exec.Command(soaktest.Binary(t, soaktest.Soakd), "serve", "--config", cfgPath)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &soakdProc{cmd: cmd, logs: &logTail{done: make(chan struct{})}}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting soakd: %v", err)
	}
	go p.logs.read(stderr)
	t.Cleanup(func() {
		killAndReap(cmd)
		if t.Failed() {
			t.Logf("soakd log:\n%s", p.logs)
		}
	})
	waitFor(t, 60*time.Second, "soakd to serve", func() bool {
		if m := p.logs.find("soakd serving"); m != nil {
			p.url = "http://" + m["addr"].(string)
			return true
		}
		select {
		case <-p.logs.done:
			t.Fatalf("soakd exited before serving:\n%s", p.logs)
		default:
		}
		return false
	})
	return p
}

// wait waits for the process to exit and returns its exit error.
func (p *soakdProc) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { <-p.logs.done; errc <- p.cmd.Wait() }()
	select {
	case err := <-errc:
		return err
	case <-time.After(timeout):
		t.Fatalf("soakd did not exit within %s", timeout)
		return nil
	}
}
