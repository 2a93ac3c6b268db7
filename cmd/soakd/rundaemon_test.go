package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/daemon"
)

// onRequestConfig is a daemon config with one job and no schedule: the
// test process (its httptest server) is the target.
func onRequestConfig(t *testing.T, url string) string {
	t.Helper()
	return fmt.Sprintf(`listen: 127.0.0.1:0
state_dir: %s
jobs:
  - name: ondemand
    target:
      pid: %d
    load:
      url: %s
      rate: 50
      duration: 1s
    sampling:
      interval: 100ms
    phases:
      baseline: "0"
      warmup: "0"
`, filepath.Join(t.TempDir(), "state"), os.Getpid(), url)
}

// TestRunOnDaemon: a job without a schedule is valid, has no next run,
// and runs when `soakd run --daemon URL JOB` asks a real daemon for it;
// an unknown job and a wrong command line are one clear line each.
func TestRunOnDaemon(t *testing.T) {
	srv, hits := countingServer(t)
	cfgPath := filepath.Join(t.TempDir(), "soakd.yaml")
	writeFile(t, cfgPath, onRequestConfig(t, srv.URL+"/"))
	var out, errb bytes.Buffer
	if code := run([]string{"check-config", cfgPath}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "ondemand") || !strings.Contains(out.String(), "runs only on request") {
		t.Fatalf("check-config: exit %d\n%s%s; want ok and the job on request", code, out.String(), errb.String())
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(cfg, daemon.Options{Listener: ln, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + ln.Addr().String()
	waitFor(t, "the daemon to answer", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	if jobs := d.Jobs(); len(jobs) != 1 || jobs[0].Schedule != "" || jobs[0].Next != nil {
		t.Fatalf("jobs = %+v; want ondemand with no schedule and no next run", jobs)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the target got %d requests before any was asked for", n)
	}

	out.Reset()
	errb.Reset()
	if code := run([]string{"run", "--daemon", base, "ondemand"}, &out, &errb); code != exitOK || !strings.HasPrefix(out.String(), "started run 1 of job ondemand: "+base+"/runs/1") {
		t.Fatalf("run --daemon: exit %d, stdout %q, stderr %q; want 0 and run 1 started", code, out.String(), errb.String())
	}
	var r struct {
		Status  string `json:"status"`
		Trigger string `json:"trigger"`
	}
	waitFor(t, "run 1 to end", func() bool { return getRun(base, &r) && r.Status != "running" })
	if r.Status != "completed" || r.Trigger != "api" || hits.Load() == 0 {
		t.Errorf("run 1: %+v, %d requests; want completed by the API with requests", r, hits.Load())
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--daemon", base, "nosuch"}, `soakd run --daemon: job "nosuch" not found at ` + base},
		{[]string{"run", "--daemon", base}, "soakd run: --daemon: missing the job's name: soakd run --daemon URL JOB"},
		{[]string{"run", "--daemon", base, "--rate", "5", "ondemand"}, "soakd run: --daemon runs a job as the daemon's config says: --rate cannot go with it (only --token-file)"},
		{[]string{"run", "--daemon", "127.0.0.1:7797", "ondemand"}, `soakd run: --daemon: "127.0.0.1:7797" has no scheme: want an absolute http:// or https:// URL (the daemon's base URL, e.g. http://127.0.0.1:7797)`},
		{[]string{"run", "--token-file", "x", "http://127.0.0.1:1/"}, "soakd run: --token-file: only with --daemon"},
	} {
		out.Reset()
		errb.Reset()
		if code := run(c.args, &out, &errb); code != exitUsage || !strings.HasPrefix(errb.String(), c.want) {
			t.Errorf("soakd %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errb.String(), exitUsage, c.want)
		}
	}
}

// getRun reads the newest run from GET /api/v1/runs into r.
func getRun(base string, r any) bool {
	resp, err := http.Get(base + "/api/v1/runs?limit=1")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var runs []json.RawMessage
	if json.NewDecoder(resp.Body).Decode(&runs) != nil || len(runs) != 1 {
		return false
	}
	return json.Unmarshal(runs[0], r) == nil
}
