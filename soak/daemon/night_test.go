package daemon

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/store"
)

// page is one alert of one notification, as a receiver got it.
type page struct {
	at                  time.Time
	sink, status        string
	name, job, resource string
}

// pager receives soakd's webhook sink (/hook) and Alertmanager's webhook
// (/am) and keeps every alert of every notification with its time.
type pager struct {
	mu    sync.Mutex
	pages []page // guarded by mu
}

func (p *pager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// soakd's payload and Alertmanager's have the same alerts[].status
	// and alerts[].labels.
	var body struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range body.Alerts {
		p.pages = append(p.pages, page{at: time.Now(), sink: strings.Trim(r.URL.Path, "/"), status: a.Status,
			name: a.Labels[alerts.LabelAlertname], job: a.Labels[alerts.LabelJob], resource: a.Labels[alerts.LabelResource]})
	}
}

// got returns the pages of sink, alert name and job, oldest first.
func (p *pager) got(sink, name, job string) []page {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []page
	for _, g := range p.pages {
		if g.sink == sink && g.name == name && g.job == job {
			out = append(out, g)
		}
	}
	return out
}

// firing says whether sink got a firing page of name and job.
func (p *pager) firing(sink, name, job string) bool {
	for _, g := range p.got(sink, name, job) {
		if g.status == string(alerts.StatusFiring) {
			return true
		}
	}
	return false
}

// resolved says whether sink got a resolved page of name and job.
func (p *pager) resolved(sink, name, job string) bool {
	for _, g := range p.got(sink, name, job) {
		if g.status == string(alerts.StatusResolved) {
			return true
		}
	}
	return false
}

// amProc is a real Alertmanager on a fixed loopback address that can be
// stopped (SIGTERM, its data kept, as an outage) and started again.
type amProc struct {
	addr, cfg, data string
	cmd             *exec.Cmd
}

func newAM(t *testing.T, hook string) *amProc {
	t.Helper()
	debianTool(t, "/usr/bin/prometheus-alertmanager", "prometheus-alertmanager")
	dir := t.TempDir()
	a := &amProc{addr: freePort(t), cfg: filepath.Join(dir, "alertmanager.yml"), data: filepath.Join(dir, "data")}
	writeConfig(t, a.cfg, fmt.Sprintf(`route:
  receiver: hook
  group_by: [alertname, job, resource]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 24h
receivers:
  - name: hook
    webhook_configs:
      - url: %s/am
        send_resolved: true
`, hook))
	t.Cleanup(func() {
		if a.cmd != nil {
			killAndReap(a.cmd)
		}
	})
	a.start(t)
	return a
}

func (a *amProc) start(t *testing.T) {
	t.Helper()
	a.cmd = exec.Command("/usr/bin/prometheus-alertmanager", "--config.file="+a.cfg, "--storage.path="+a.data,
		"--web.listen-address="+a.addr, "--cluster.listen-address=", "--log.level=warn")
	a.cmd.Stderr = os.Stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("starting alertmanager: %v", err)
	}
	waitFor(t, 60*time.Second, "alertmanager to be ready", func() bool {
		resp, err := http.Get("http://" + a.addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// stop ends Alertmanager with SIGTERM (it saves its notification log)
// and reaps it.
func (a *amProc) stop(t *testing.T) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	a.cmd = nil
}

// stateOnTmpfs returns a state directory on a fresh 32 MiB tmpfs, and
// true; where a tmpfs cannot be mounted (not root) it says so and returns
// a plain temporary directory and false: the night then has no full disk.
func stateOnTmpfs(t *testing.T) (string, bool) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=32m"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs (CI runs as root): %v", err)
		}
		t.Logf("no full disk in this night: mounting a tmpfs needs root: %v", err)
		return t.TempDir(), false
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir, true
}

// TestNight is bench/night.sh made short (issue 43, item 6): a real soakd
// soaks two long-lived demo targets, run after run, its alerts sent to a
// webhook and to a real Alertmanager, both received here with their
// times, while faults come in turn: the leaker starts leaking 20 s after
// it started; Alertmanager is stopped; soakd is SIGKILLed between runs
// and restarted; Alertmanager comes back; soakd is SIGKILLed mid-run and
// restarted; the other target's leak is fixed (restarted clean on its
// port); the store's disk (a tmpfs) fills in the middle of a run and is
// freed. Each sink got each leak paged exactly once, after it started;
// the fixed leak resolved after the fix and nothing of it fired after;
// the leak not fixed never resolved; nothing else paged.
func TestNight(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a compressed night: about 4 minutes of runs")
	}
	pg := &pager{}
	srv := httptest.NewServer(pg)
	t.Cleanup(srv.Close)
	am := newAM(t, srv.URL)
	state, tmpfs := stateOnTmpfs(t)

	leakStart := time.Now().Add(20 * time.Second)
	leaker := startTarget(t, "--leak-bytes", "16384", "--leak-after", "20s")
	fixed := startTarget(t, "--leak-bytes", "16384")
	// Long-lived, as servers in service are: a fresh Go server's runtime
	// sizes itself over its first thousands of requests, and a 10 s soak
	// of that reads pss leak (bench/night.sh's first try paged it).
	serve(t, leaker.addr, 3000)
	serve(t, fixed.addr, 3000)
	cfgPath := filepath.Join(t.TempDir(), "soakd.yaml")
	extra := fmt.Sprintf(`alerts:
  repeat_interval: 24h
  retry: {initial: 100ms, max: 1s}
  sinks:
    - name: am
      type: alertmanager
      urls: [http://%s]
    - name: hook
      type: webhook
      url: %s/hook
`, am.addr, srv.URL)
	writeConfig(t, cfgPath, configYAML(state, extra,
		jobSpec{name: "leaker", target: leaker, rate: 100, duration: 10 * time.Second, alerts: []string{"am", "hook"}},
		jobSpec{name: "fixed", target: fixed, rate: 100, duration: 10 * time.Second, alerts: []string{"am", "hook"}}))
	p := startSoakd(t, cfgPath)
	run := func(jobs ...string) {
		t.Helper()
		ids := make([]int64, len(jobs))
		for i, j := range jobs {
			ids[i] = startRun(t, p.url, j, "")
		}
		for i, j := range jobs {
			waitFor(t, 60*time.Second, fmt.Sprintf("%s: run %d to end", j, ids[i]), func() bool {
				return runStatus(t, p.url, j, ids[i]).Status != store.StatusRunning
			})
		}
	}
	kill := func() {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = p.wait(t, 30*time.Second)
		p = startSoakd(t, cfgPath)
	}

	run("leaker", "fixed")
	am.stop(t)
	for i := 0; !(pg.firing("hook", alerts.AlertLeak, "leaker") && pg.firing("hook", alerts.AlertLeak, "fixed")); i++ {
		if i == 6 {
			t.Fatalf("after %d more runs the leaks paged %v and %v on the webhook; want both", i,
				pg.got("hook", alerts.AlertLeak, "leaker"), pg.got("hook", alerts.AlertLeak, "fixed"))
		}
		run("leaker", "fixed")
	}
	// Between runs is after the runs' pages are confirmed and stored: a
	// kill in the moment between a page's delivery and its record sends
	// it again after the restart (at least once; docs/night.md).
	waitFor(t, 30*time.Second, "the webhook's deliveries stored", func() bool {
		for _, sa := range storedAlerts(t, state) {
			if sa.Alert.Status == alerts.StatusFiring && sa.Sinks["hook"].Delivered.Before(sa.Alert.StartsAt) {
				return false
			}
		}
		return true
	})
	kill() // Alertmanager still down
	am.start(t)
	waitFor(t, 60*time.Second, "both leaks in Alertmanager's notifications", func() bool {
		return pg.firing("am", alerts.AlertLeak, "leaker") && pg.firing("am", alerts.AlertLeak, "fixed")
	})
	id := startRun(t, p.url, "leaker", "")
	waitFor(t, 60*time.Second, "3 samples of the leaker's run", func() bool { return sampleCount(t, p.url, id) >= 3 })
	kill() // mid-run
	if got := runStatus(t, p.url, "leaker", id); got.Status != store.StatusInterrupted {
		t.Errorf("run %d cut short by the kill: %s; want %s", id, got.Status, store.StatusInterrupted)
	}

	killTarget(t, fixed)
	waitFor(t, 30*time.Second, "the leaking process gone from its port", func() bool {
		c, err := net.Dial("tcp", fixed.addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	fixedAt := time.Now()
	soaktest.StartServer(t, soaktest.Binary(t, soaktest.Target), "--listen", fixed.addr, "--pid-file", fixed.pidFile, "--max-lifetime", "10m")
	serve(t, fixed.addr, 3000)
	for i := 0; !(pg.resolved("hook", alerts.AlertLeak, "fixed") && pg.resolved("am", alerts.AlertLeak, "fixed")); i++ {
		if i == 8 {
			t.Fatalf("%d runs of the fixed target and its leak is not resolved on both sinks: %v", i, pg.got("", alerts.AlertLeak, "fixed"))
		}
		run("fixed")
	}

	if tmpfs {
		id := startRun(t, p.url, "leaker", "")
		waitFor(t, 60*time.Second, "3 samples of the leaker's run", func() bool { return sampleCount(t, p.url, id) >= 3 })
		filler := fillDisk(t, state)
		waitFor(t, 60*time.Second, "the run on a full disk to end", func() bool {
			return runStatus(t, p.url, "leaker", id).Status != store.StatusRunning
		})
		// A store whose files already hold the room may take the run's
		// samples on a full disk: the run may end completed or failed.
		r := runStatus(t, p.url, "leaker", id)
		t.Logf("run %d on a full disk: %s %s", id, r.Status, r.Error)
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	run("leaker", "fixed")
	time.Sleep(3 * time.Second) // Alertmanager's group_interval: a late page would come now
	checkNight(t, pg, leakStart, fixedAt)
}

// checkNight asserts TestNight's pages on each sink: each leak paged once,
// after it started; the fixed one resolved once, after the fix, and not
// fired after it; the leaker's never resolved; nothing else.
func checkNight(t *testing.T, pg *pager, leakStart, fixedAt time.Time) {
	t.Helper()
	pg.mu.Lock()
	all := append([]page(nil), pg.pages...)
	pg.mu.Unlock()
	var lines []string
	for _, g := range all {
		lines = append(lines, fmt.Sprintf("%s %s %s %s/%s/%s", g.at.Format("15:04:05.000"), g.sink, g.status, g.name, g.job, g.resource))
		if g.name != alerts.AlertLeak {
			t.Errorf("%s got %s %s/%s; want only the two leaks paged", g.sink, g.status, g.name, g.job)
		}
	}
	sort.Strings(lines)
	t.Logf("the night's pages:\n%s", strings.Join(lines, "\n"))
	for _, sink := range []string{"hook", "am"} {
		var fire, res []time.Time
		for _, g := range pg.got(sink, alerts.AlertLeak, "leaker") {
			if g.status == string(alerts.StatusFiring) {
				fire = append(fire, g.at)
			} else {
				res = append(res, g.at)
			}
		}
		if len(fire) != 1 || len(res) != 0 {
			t.Errorf("%s: the leaker's leak paged %d times firing, %d resolved; want once firing, never resolved", sink, len(fire), len(res))
		} else if fire[0].Before(leakStart) {
			t.Errorf("%s: the leaker's leak paged at %v, before it started at %v", sink, fire[0], leakStart)
		}
		fire, res = nil, nil
		for _, g := range pg.got(sink, alerts.AlertLeak, "fixed") {
			if g.status == string(alerts.StatusFiring) {
				fire = append(fire, g.at)
			} else {
				res = append(res, g.at)
			}
		}
		if len(fire) != 1 || len(res) != 1 {
			t.Errorf("%s: the fixed leak paged %d times firing, %d resolved; want once each", sink, len(fire), len(res))
			continue
		}
		if fire[0].After(fixedAt) || res[0].Before(fixedAt) {
			t.Errorf("%s: the fixed leak fired at %v and resolved at %v; want fired before its fix at %v, resolved after",
				sink, fire[0].Format(time.TimeOnly), res[0].Format(time.TimeOnly), fixedAt.Format(time.TimeOnly))
		}
	}
}

// TestTargetGoneAtRunEndStaysDown: bench/night.sh's second night killed
// its crasher 2 s into a 10 s load. The load ended before the 10 s
// dead_grace did, so the report reads no death, and SoakdTargetDown
// resolved at the run's end with the target still gone (paged, then
// resolved 11 s later, 17 s before the crasher was back). A target gone
// in the run's last sample keeps the alert until a run finds it back.
func TestTargetGoneAtRunEndStaysDown(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	tg := startTarget(t)
	extra := "alerts:\n  retry: {initial: 100ms, max: 1s}\n  sinks:\n    - name: hook\n      type: webhook\n      url: " + srv.URL + "\n"
	cfg := parseConfig(t, configYAML(t.TempDir(), extra,
		jobSpec{name: "web", target: tg, duration: 6 * time.Second, alerts: []string{"hook"}}))
	d := startDaemon(t, cfg, Options{})
	id := startRun(t, d.url, "web", "")
	waitFor(t, 60*time.Second, "3 samples", func() bool { return sampleCount(t, d.url, id) >= 3 })
	killTarget(t, tg) // under 6 s before the load's end: within dead_grace (10 s)
	waitFor(t, 60*time.Second, "SoakdTargetDown firing", func() bool {
		_, ok := hook.find(alerts.AlertTargetDown, alerts.StatusFiring)
		return ok
	})
	waitFor(t, 60*time.Second, "the run to end", func() bool { return runStatus(t, d.url, "web", id).Status != store.StatusRunning })
	time.Sleep(2 * time.Second) // a resolve would be delivered by now
	if _, ok := hook.find(alerts.AlertTargetDown, alerts.StatusResolved); ok {
		t.Fatalf("SoakdTargetDown resolved at the end of run %d, its target still gone", id)
	}
	waitFor(t, 30*time.Second, "the killed target gone from its port", func() bool {
		c, err := net.Dial("tcp", tg.addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	soaktest.StartServer(t, soaktest.Binary(t, soaktest.Target), "--listen", tg.addr, "--pid-file", tg.pidFile, "--max-lifetime", "10m")
	id2 := startRun(t, d.url, "web", "")
	waitFor(t, 60*time.Second, "the next run to end", func() bool { return runStatus(t, d.url, "web", id2).Status != store.StatusRunning })
	waitFor(t, 30*time.Second, "SoakdTargetDown resolved by a run with the target back", func() bool {
		_, ok := hook.find(alerts.AlertTargetDown, alerts.StatusResolved)
		return ok
	})
}
