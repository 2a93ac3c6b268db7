package daemon

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/store"
)

// startAlertmanager runs the real Alertmanager (Debian package
// prometheus-alertmanager) on a free loopback port, clustering off, and
// returns its base URL; it is killed by PID and reaped at cleanup.
func startAlertmanager(t *testing.T) string {
	t.Helper()
	return startAlertmanagerWith(t, "route:\n  receiver: blackhole\n  group_wait: 1s\nreceivers:\n  - name: blackhole\n")
}

// startAlertmanagerWith is startAlertmanager with the config yaml.
func startAlertmanagerWith(t *testing.T, yaml string) string {
	t.Helper()
	return startAlertmanagerAt(t, freePort(t), yaml)
}

// startAlertmanagerAt is startAlertmanager on addr with the config yaml.
func startAlertmanagerAt(t *testing.T, addr, yaml string) string {
	t.Helper()
	bin := debianTool(t, "/usr/bin/prometheus-alertmanager", "prometheus-alertmanager")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	writeConfig(t, cfg, yaml)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting alertmanager: %v", err)
	}
	t.Cleanup(func() { killAndReap(cmd) })
	base := "http://" + addr
	waitFor(t, 60*time.Second, "alertmanager to be ready", func() bool {
		code, _ := httpDo(t, "GET", base+"/-/ready", "", nil)
		return code == http.StatusOK
	})
	return base
}

// amAlert is the part of Alertmanager's GET /api/v2/alerts the tests read.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	EndsAt      time.Time         `json:"endsAt"`
}

// amActive returns the alert named name of job that Alertmanager holds as
// active (endsAt in the future), or nil.
func amActive(t *testing.T, base, name, job string) *amAlert {
	t.Helper()
	var got []amAlert
	getJSON(t, base+"/api/v2/alerts", &got)
	for i, a := range got {
		if a.Labels[alerts.LabelAlertname] == name && a.Labels[alerts.LabelJob] == job && a.EndsAt.After(time.Now()) {
			return &got[i]
		}
	}
	return nil
}

// TestKill9ResolvesCutShortAlerts: a real soakd fires SoakdTargetDown into
// the real Alertmanager (its target killed mid-run) and is killed with
// SIGKILL. The alert's endsAt is at most resolve_timeout (5 min) away, so
// even a soakd that never comes back cannot leave it active for hours;
// the restarted soakd finds the alert in its store, sees its run was cut
// short, and resolves it in Alertmanager.
func TestKill9ResolvesCutShortAlerts(t *testing.T) {
	t.Parallel()
	am := startAlertmanager(t)
	tg := startTarget(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "soakd.yaml")
	extra := fmt.Sprintf("alerts:\n  sinks:\n    - name: am\n      type: alertmanager\n      urls: [%s]\n", am)
	writeConfig(t, cfgPath, configYAML(filepath.Join(dir, "state"), extra,
		jobSpec{name: "web", target: tg, duration: 2 * time.Minute, alerts: []string{"am"}}))
	p := startSoakd(t, cfgPath)
	id := startRun(t, p.url, "web", "")
	waitFor(t, 60*time.Second, "3 stored samples", func() bool { return sampleCount(t, p.url, id) >= 3 })
	killTarget(t, tg)
	var got *amAlert
	waitFor(t, 60*time.Second, "SoakdTargetDown active in Alertmanager", func() bool {
		got = amActive(t, am, alerts.AlertTargetDown, "web")
		return got != nil
	})
	if limit := time.Now().Add(alerts.DefaultResolveTimeout + time.Minute); got.EndsAt.After(limit) {
		t.Errorf("endsAt %v; want within resolve_timeout (%v) of now", got.EndsAt, alerts.DefaultResolveTimeout)
	}
	if got.Annotations[alerts.AnnotationRunID] != itoa(id) {
		t.Errorf("run_id annotation %q; want %d", got.Annotations[alerts.AnnotationRunID], id)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.wait(t, 30*time.Second)

	p2 := startSoakd(t, cfgPath)
	waitFor(t, 60*time.Second, "SoakdTargetDown resolved in Alertmanager", func() bool {
		return amActive(t, am, alerts.AlertTargetDown, "web") == nil
	})
	if p2.logs.find("resolved alerts that no longer hold after the restart") == nil {
		t.Errorf("no log line about the resolved alerts")
	}
	waitFor(t, 30*time.Second, "the confirmed resolve forgotten in the store", func() bool {
		return len(storedAlerts(t, filepath.Join(dir, "state"))) == 0
	})
}

// storedAlerts reads the alert state a soakd keeps in stateDir.
func storedAlerts(t *testing.T, stateDir string) []alerts.StoredAlert {
	t.Helper()
	st, err := store.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Alerts()
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLeakAlertStaysAcrossRuns soaks one long-lived leaking process every
// 15 s with the real Alertmanager down for the first two runs: the leak
// reaches Alertmanager once it is up, and stays active through the later
// runs (a long-lived process's later runs may read inconclusive, which
// is no evidence that the leak stopped).
func TestLeakAlertStaysAcrossRuns(t *testing.T) {
	t.Parallel()
	debianTool(t, "/usr/bin/prometheus-alertmanager", "prometheus-alertmanager")
	addr := freePort(t)
	tg := startTarget(t, "--leak-bytes", "32768")
	extra := fmt.Sprintf("alerts:\n  retry: {initial: 100ms, max: 1s}\n  sinks:\n    - name: am\n      type: alertmanager\n      urls: [http://%s]\n", addr)
	cfg := parseConfig(t, configYAML(t.TempDir(), extra,
		jobSpec{name: "web", schedule: "@every 15s", target: tg, rate: 150, duration: 8 * time.Second, alerts: []string{"am"}}))
	d := startDaemon(t, cfg, Options{LiveInterval: time.Second})
	ended := func() int {
		var runs []runInfo
		getJSON(t, d.url+"/api/v1/runs?job=web&limit=100", &runs)
		n := 0
		for _, r := range runs {
			if r.Status != store.StatusRunning {
				n++
			}
		}
		return n
	}
	waitFor(t, 120*time.Second, "two runs to end with Alertmanager down", func() bool { return ended() >= 2 })
	if a := d.hub().active("web"); len(a) == 0 {
		t.Fatalf("no alert firing after two runs of a leaking process")
	}
	am := startAlertmanagerAt(t, addr, "route:\n  receiver: blackhole\n  group_wait: 1s\nreceivers:\n  - name: blackhole\n")
	waitFor(t, 60*time.Second, "the leak in Alertmanager", func() bool { return amActive(t, am, alerts.AlertLeak, "web") != nil })
	runs := ended()
	waitFor(t, 120*time.Second, "two more runs to end", func() bool {
		if amActive(t, am, alerts.AlertLeak, "web") == nil {
			t.Fatalf("the leak alert was resolved in Alertmanager after %d runs; want it active while the process leaks", ended())
		}
		return ended() >= runs+2
	})
	var got []runInfo
	getJSON(t, d.url+"/api/v1/runs?job=web&limit=100", &got)
	for _, r := range got {
		t.Logf("run %d: %s, %s", r.ID, r.Status, r.Verdict)
	}
}
