package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startDyingTarget builds testdata/target and starts it on a free loopback
// port to exit by itself after lifetime; it returns its address and pid
// file. It is killed by PID and reaped at cleanup.
func startDyingTarget(t *testing.T, lifetime time.Duration) (addr, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "target")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/soakd/soakd/testdata/target").CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/target: %v\n%s", err, out)
	}
	portFile, pidFile := filepath.Join(dir, "port"), filepath.Join(dir, "pid")
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--port-file", portFile, "--pid-file", pidFile,
		"--max-lifetime", lifetime.String())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(portFile)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			return strings.TrimSpace(string(b)), pidFile
		}
		if time.Now().After(deadline) {
			t.Fatal("the target wrote no port file")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunTargetDiesExits3: the target exits in the middle of a 2-minute
// load and does not come back: soakd stops the load once the grace period
// passed, skips the cool-down, says so first in the report and in the
// JSON (target.died_at), and exits 3. The load says it was stopped by the
// target's death, and the attempts made while the target was gone are
// counted apart: not in the load's requests, nor in the soak's.
func TestRunTargetDiesExits3(t *testing.T) {
	addr, pidFile := startDyingTarget(t, 6*time.Second)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--pidfile", pidFile, "-q", "--json", "--rate", "200", "-c", "4", "-d", "2m",
		"--cooldown", "1m", "--dead-grace", "2s", "--baseline", "1s", "--out", out, "http://" + addr + "/"}, &stdout, &stderr)
	if code != exitTargetDied {
		t.Fatalf("exit code %d; want %d (target died)\nstderr: %s", code, exitTargetDied, stderr.String())
	}
	var rep struct {
		Verdict string `json:"verdict"`
		Target  struct {
			DiedAt    *time.Time `json:"died_at"`
			Grace     float64    `json:"dead_grace_seconds"`
			Incarnate int        `json:"incarnations"`
		} `json:"target"`
		Phases struct {
			Soak         float64 `json:"soak_seconds"`
			Cooldown     float64 `json:"cooldown_seconds"`
			WarmRequests uint64  `json:"warmup_requests"`
			SoakRequests uint64  `json:"soak_requests"`
		} `json:"phases"`
		Load struct {
			Requests  uint64            `json:"requests"`
			Successes uint64            `json:"successes"`
			Errors    uint64            `json:"errors"`
			Causes    map[string]uint64 `json:"errors_by_cause"`
			StoppedBy string            `json:"stopped_by"`
			WhileGone uint64            `json:"attempts_while_target_gone"`
		} `json:"load"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	t.Logf("target died at %v; soak %.1f s of the planned 120 s, cool-down %.1f s", rep.Target.DiedAt, rep.Phases.Soak, rep.Phases.Cooldown)
	if rep.Target.DiedAt == nil || rep.Target.Grace != 2 {
		t.Errorf("target: %+v; want died_at and a grace of 2 s", rep.Target)
	}
	l := rep.Load
	t.Logf("load: %+v; phases %+v", l, rep.Phases)
	if l.StoppedBy != "target_died" {
		t.Errorf("load.stopped_by %q; want target_died", l.StoppedBy)
	}
	// At 200 req/s for a grace of 2 s, hundreds of attempts are refused
	// while the target is gone; at least one sample interval of them.
	if l.WhileGone < 50 {
		t.Errorf("load.attempts_while_target_gone %d; want the refused attempts of the grace period (≥ 50)", l.WhileGone)
	}
	var byCause uint64
	for _, n := range l.Causes {
		byCause += n
	}
	if l.Successes+l.Errors != l.Requests || byCause != l.Errors {
		t.Errorf("load: %d successes + %d errors != %d requests, or errors by cause sum to %d: the attempts while gone were not taken out whole", l.Successes, l.Errors, l.Requests, byCause)
	}
	if l.Causes["connect_refused"] >= l.WhileGone {
		t.Errorf("load: %d refused in the soak and %d attempts while gone; want most refusals counted apart", l.Causes["connect_refused"], l.WhileGone)
	}
	if soak := rep.Phases.WarmRequests + rep.Phases.SoakRequests; soak > l.Requests {
		t.Errorf("phases: %d requests in warm-up and soak; want at most the load's %d, without the attempts while gone", soak, l.Requests)
	}
	txt, err := os.ReadFile(filepath.Join(out, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Stopped by:             the target died (gone at ", "While target gone:"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("report.txt does not say %q:\n%s", want, txt)
		}
	}
	if strings.Contains(string(txt), "(about 0 s)") {
		t.Errorf("report.txt advises more requests in about 0 s, from a count inflated by the attempts while gone:\n%s", txt)
	}
	if rep.Phases.Soak >= 100 || rep.Phases.Cooldown != 0 {
		t.Errorf("phases: soak %.1f s, cool-down %.1f s; want the load stopped well before its 2 minutes, and no cool-down",
			rep.Phases.Soak, rep.Phases.Cooldown)
	}
	if !strings.Contains(stderr.String(), "the target died and is not back: stopping the load") {
		t.Errorf("stderr does not say the load stopped: %s", stderr.String())
	}
}
