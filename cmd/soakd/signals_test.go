package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/model"
)

// soakdBinary builds soakd once for the tests that need a real process.
func soakdBinary(t *testing.T) string { return soaktest.Binary(t, soaktest.Soakd) }

// TestMain lets the fault suite's rows that mostly wait run all at once
// (see faultRow.waits); no other test here is parallel.
func TestMain(m *testing.M) {
	soaktest.Parallel(4)
	os.Exit(soaktest.Main(m))
}

// countingServer serves "ok" and counts requests.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// startSoakd starts soakd with args and reaps it when the test ends.
func startSoakd(t *testing.T, stdout *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(soakdBinary(t), args...)
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("soakd stderr:\n%s", stderr.String())
		}
	})
	return cmd
}

// waitFor waits up to 30 s for cond (soaktest.WaitFor).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	soaktest.WaitFor(t, 30*time.Second, what, cond)
}

func TestRunSIGINTStopsCleanlyAndPrintsTheReport(t *testing.T) {
	srv, hits := countingServer(t)
	var stdout bytes.Buffer
	cmd := startSoakd(t, &stdout, "run", "--no-probe", "-q", "--json", "-d", "2m", srv.URL+"/")
	waitFor(t, "the load to start", func() bool { return hits.Load() > 200 })
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := exitCode(err); code != exitOK {
		t.Fatalf("exit code after SIGINT = %d; want %d", code, exitOK)
	}
	var rep struct {
		Load struct {
			Requests  uint64 `json:"requests"`
			StoppedBy string `json:"stopped_by"`
		} `json:"load"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report after SIGINT is not JSON: %v\n%s", err, stdout.String())
	}
	if rep.Load.StoppedBy != "interrupt" || rep.Load.Requests == 0 || int64(rep.Load.Requests) > hits.Load() {
		t.Errorf("load = %+v, server saw %d; want stopped_by interrupt and 0 < requests <= hits", rep.Load, hits.Load())
	}
}

func TestRunKilledWithSIGKILLLeavesEverySampleOnDisk(t *testing.T) {
	srv, _ := countingServer(t)
	out := t.TempDir()
	csvPath := filepath.Join(out, "samples.csv")
	// The test process owns the listening socket, so it is the target.
	cmd := startSoakd(t, &bytes.Buffer{}, "run", "-q", "--interval", "50ms", "--baseline", "0", "--rate", "200", "-d", "2m", "--out", out, srv.URL+"/")
	lines := func() int {
		b, _ := os.ReadFile(csvPath)
		return strings.Count(string(b), "\n")
	}
	waitFor(t, "10 samples in samples.csv", func() bool { return lines() > 10 })
	cmd.Process.Kill()
	cmd.Wait()
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := model.ReadCSV(f)
	if err != nil {
		t.Fatalf("samples.csv after kill -9: %v", err)
	}
	if len(recs) < 10 {
		t.Fatalf("samples.csv holds %d samples; want at least 10", len(recs))
	}
	last := recs[len(recs)-1]
	if !last.Alive || last.RootPID != int32(os.Getpid()) || last.Requests == 0 {
		t.Errorf("last sample: alive %v root %d requests %d; want the test process, alive, with requests", last.Alive, last.RootPID, last.Requests)
	}
}
