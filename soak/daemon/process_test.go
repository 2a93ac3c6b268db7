package daemon

import (
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/store"
)

// TestKill9Interrupted kills a real `soakd serve` with SIGKILL in the middle
// of a run and restarts it: the run is "interrupted", every sample stored
// before the kill is there, it has a report, and soakd_runs_total counts
// it as interrupted.
func TestKill9Interrupted(t *testing.T) {
	t.Parallel()
	tg := startTarget(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "soakd.yaml")
	writeConfig(t, cfgPath, configYAML(filepath.Join(dir, "state"), "", jobSpec{name: "web", target: tg, duration: 2 * time.Minute}))
	p := startSoakd(t, cfgPath)
	id := startRun(t, p.url, "web", "")
	waitFor(t, 60*time.Second, "10 stored samples", func() bool { return sampleCount(t, p.url, id) >= 10 })
	before := sampleCount(t, p.url, id)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.wait(t, 30*time.Second)

	p2 := startSoakd(t, cfgPath)
	r := runStatus(t, p2.url, "web", id)
	if r.Status != store.StatusInterrupted {
		t.Errorf("status after kill -9 and restart = %q; want %q", r.Status, store.StatusInterrupted)
	}
	after := sampleCount(t, p2.url, id)
	if after < before {
		t.Errorf("samples after restart = %d; want >= %d (seen before the kill)", after, before)
	}
	var rep struct {
		Verdict string `json:"verdict"`
		Samples int    `json:"samples"`
	}
	getJSON(t, p2.url+"/api/v1/runs/"+itoa(id), &rep)
	if rep.Verdict == "" || rep.Samples != after {
		t.Errorf("report: verdict %q, %d samples; want a verdict over all %d samples", rep.Verdict, rep.Samples, after)
	}
	if p2.logs.find("run interrupted by a crash: analysed what was stored") == nil {
		t.Errorf("no log line about the interrupted run")
	}
	_, body := httpDo(t, "GET", p2.url+"/metrics", "", nil)
	if want := `soakd_runs_total{job="web",result="interrupted"} 1`; !strings.Contains(string(body), want+"\n") {
		t.Errorf("/metrics after the restart lacks %s", want)
	}
}

// notifySocket listens on a NOTIFY_SOCKET and collects the messages.
type notifySocket struct {
	path string
	mu   sync.Mutex
	msgs []string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	n := &notifySocket{path: filepath.Join(t.TempDir(), "notify.sock")}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				return
			}
			n.mu.Lock()
			n.msgs = append(n.msgs, string(buf[:k]))
			n.mu.Unlock()
		}
	}()
	return n
}

func (n *notifySocket) messages() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.msgs)
}

func (n *notifySocket) has(prefix string) bool {
	return slices.ContainsFunc(n.messages(), func(m string) bool { return strings.HasPrefix(m, prefix) })
}

// TestSignals drives a real `soakd serve` through SIGHUP with a bad config
// (the jobs keep running), SIGHUP with a changed config (a job is added, one
// removed), and SIGTERM during a run (it ends "stopped" with a report and
// the process exits). sd_notify messages arrive on a test NOTIFY_SOCKET:
// READY=1 once the listener is up, STATUS=, WATCHDOG=1, RELOADING=1, and
// STOPPING=1 last.
func TestSignals(t *testing.T) {
	t.Parallel()
	tg := startTarget(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cfgPath := filepath.Join(dir, "soakd.yaml")
	writeConfig(t, cfgPath, configYAML(state, "", jobSpec{name: "a", target: tg, duration: 2 * time.Minute}))
	ns := listenNotify(t)
	p := startSoakd(t, cfgPath, "NOTIFY_SOCKET="+ns.path, "WATCHDOG_USEC=400000")
	// The listener answers before the datagram is read here: wait for the
	// first message, then check that it was READY.
	waitFor(t, 30*time.Second, "the first sd_notify message", func() bool { return len(ns.messages()) > 0 })
	if msgs := ns.messages(); msgs[0] != "READY=1" {
		t.Errorf("first sd_notify messages = %q; want READY=1 first, once serving", msgs)
	}
	id := startRun(t, p.url, "a", "")

	writeConfig(t, cfgPath, "listen: 127.0.0.1:0\nbogus_field: 1\n")
	hup(t, p)
	waitFor(t, 30*time.Second, "the failed reload's log line", func() bool {
		return p.logs.find("config reload failed; the old config stays in force") != nil
	})
	if got := jobNames(t, p.url); !slices.Equal(got, []string{"a"}) {
		t.Errorf("jobs after a bad reload = %v; want [a]", got)
	}
	n := sampleCount(t, p.url, id)
	waitFor(t, 30*time.Second, "the run to go on after a bad reload", func() bool { return sampleCount(t, p.url, id) > n })

	writeConfig(t, cfgPath, configYAML(state, "", jobSpec{name: "b", target: tg}))
	hup(t, p)
	waitFor(t, 30*time.Second, "job b to replace job a", func() bool { return slices.Equal(jobNames(t, p.url), []string{"b"}) })
	waitFor(t, 30*time.Second, "STATUS= and WATCHDOG=1", func() bool {
		return ns.has("STATUS=running a") && ns.has("WATCHDOG=1") && ns.has("RELOADING=1")
	})

	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 60*time.Second); err != nil {
		t.Errorf("soakd exited with %v after SIGTERM; want status 0", err)
	}
	t.Logf("SIGTERM to exit: %s", time.Since(start).Round(time.Millisecond))
	checkStopped(t, state, id)
	if msgs := ns.messages(); msgs[len(msgs)-1] != "STOPPING=1" {
		t.Errorf("last sd_notify message = %q; want STOPPING=1", msgs[len(msgs)-1])
	}
}

func hup(t *testing.T, p *soakdProc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

func jobNames(t *testing.T, base string) []string {
	t.Helper()
	var jobs []JobInfo
	getJSON(t, base+"/api/v1/jobs", &jobs)
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	return names
}

// checkStopped reads the store of a stopped soakd: run id ended "stopped"
// with a report.
func checkStopped(t *testing.T, state string, id int64) {
	t.Helper()
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusStopped || r.Verdict == "" {
		t.Errorf("run %d after SIGTERM: status %q, verdict %q; want stopped with a verdict", id, r.Status, r.Verdict)
	}
	if _, err := st.ReportJSON(id); err != nil {
		t.Errorf("run %d after SIGTERM: report: %v", id, err)
	}
}
