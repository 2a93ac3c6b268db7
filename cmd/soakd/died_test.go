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
// JSON (target.died_at), and exits 3.
func TestRunTargetDiesExits3(t *testing.T) {
	addr, pidFile := startDyingTarget(t, 6*time.Second)
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--pidfile", pidFile, "-q", "--json", "--rate", "50", "-c", "4", "-d", "2m",
		"--cooldown", "1m", "--dead-grace", "1s", "--baseline", "1s", "http://" + addr + "/"}, &stdout, &stderr)
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
			Soak     float64 `json:"soak_seconds"`
			Cooldown float64 `json:"cooldown_seconds"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	t.Logf("target died at %v; soak %.1f s of the planned 120 s, cool-down %.1f s", rep.Target.DiedAt, rep.Phases.Soak, rep.Phases.Cooldown)
	if rep.Target.DiedAt == nil || rep.Target.Grace != 1 {
		t.Errorf("target: %+v; want died_at and a grace of 1 s", rep.Target)
	}
	if rep.Phases.Soak >= 100 || rep.Phases.Cooldown != 0 {
		t.Errorf("phases: soak %.1f s, cool-down %.1f s; want the load stopped well before its 2 minutes, and no cool-down",
			rep.Phases.Soak, rep.Phases.Cooldown)
	}
	if !strings.Contains(stderr.String(), "the target died and is not back: stopping the load") {
		t.Errorf("stderr does not say the load stopped: %s", stderr.String())
	}
}
