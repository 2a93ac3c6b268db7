package abrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"

	"go.uber.org/zap/zaptest"
)

var (
	targetOnce sync.Once
	targetBin  string
	targetErr  error
)

// targetBinary builds testdata/target once per test binary.
func targetBinary(t *testing.T) string {
	t.Helper()
	targetOnce.Do(func() {
		dir, err := os.MkdirTemp("", "abrun-target")
		if err != nil {
			targetErr = err
			return
		}
		targetBin = filepath.Join(dir, "target")
		out, err := exec.Command("go", "build", "-o", targetBin, "github.com/soakd/soakd/testdata/target").CombinedOutput()
		if err != nil {
			targetErr = err
			t.Logf("%s", out)
		}
	})
	if targetErr != nil {
		t.Fatalf("go build testdata/target: %v", targetErr)
	}
	return targetBin
}

// abRun runs an A/B soak of two commands of the test target.
func abRun(t *testing.T, a, b string, o Options) *Result {
	t.Helper()
	bin := targetBinary(t)
	o.A.Exec = bin + " --listen 127.0.0.1:{port} " + a
	o.B.Exec = bin + " --listen 127.0.0.1:{port} " + b
	o.Log = zaptest.NewLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after %d pairs, %d requests (A %d, B %d), %.1fs, %d looks, stopped by %s",
		res.Verdict, res.Pairs, res.Requests, res.RequestsA, res.RequestsB, res.Seconds, res.Looks, res.StoppedBy)
	for _, m := range res.Metrics {
		t.Logf("  %-16s %s  A %.4g  B %.4g  diff %.4g  ci [%.4g, %.4g]  margin %.4g  at %d", m.Name, m.Verdict, m.A, m.B, m.Difference, m.CI95[0], m.CI95[1], m.Margin, m.DecidedAt)
	}
	return res
}

func TestExploreLeak(t *testing.T) {
	abRun(t, "", "--leak-bytes 120", Options{Requests: 400000, Duration: 60 * time.Second, BlockRequests: 1000, LookEvery: 1, Progress: os.Stderr, Load: load.Options{Concurrency: 4, KeepAlive: true}})
}

func TestExploreSame(t *testing.T) {
	abRun(t, "", "", Options{Requests: 400000, Duration: 60 * time.Second})
}
