// Package promtest runs the real Prometheus (the Debian package's
// /usr/bin/prometheus) on loopback for tests: a temporary config and data
// directory, a short scrape interval, stopped and reaped by PID when the
// test ends.
package promtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
)

// Bin is the Debian package's Prometheus.
const Bin = "/usr/bin/prometheus"

// Need skips the test when Prometheus is missing outside CI, and fails it
// in CI (CI=true), where .ci/run installs it.
func Need(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: install the Debian package prometheus", Bin)
		}
		t.Skipf("%s is missing (Debian package prometheus); CI installs it", Bin)
	}
}

// Job is one scrape job: its name and its targets' HOST:PORT.
type Job struct {
	Name    string
	Targets []string
	// Labels are added to every series of the job's targets.
	Labels map[string]string
	// HonorLabels keeps the targets' own job and instance labels (a
	// target that exports series of other jobs, as soakd does).
	HonorLabels bool
}

// Start runs Prometheus scraping jobs every interval, waits until it is
// ready and has scraped every target once, and returns its base URL.
func Start(t testing.TB, interval time.Duration, jobs ...Job) string {
	t.Helper()
	return StartWithRules(t, interval, nil, jobs...)
}

// StartWithRules is Start with the rule files rules (paths) loaded and
// evaluated every interval.
func StartWithRules(t testing.TB, interval time.Duration, rules []string, jobs ...Job) string {
	t.Helper()
	Need(t)
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n", interval, interval, interval)
	if len(rules) > 0 {
		cfg.WriteString("rule_files:\n")
		for _, r := range rules {
			abs, err := filepath.Abs(r)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&cfg, "  - %q\n", abs)
		}
	}
	cfg.WriteString("scrape_configs:\n")
	n := 0
	for _, j := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %q\n", j.Name)
		if j.HonorLabels {
			cfg.WriteString("    honor_labels: true\n")
		}
		cfg.WriteString("    static_configs:\n      - targets: [")
		for i, tg := range j.Targets {
			if i > 0 {
				cfg.WriteString(", ")
			}
			fmt.Fprintf(&cfg, "%q", tg)
			n++
		}
		cfg.WriteString("]\n")
		if len(j.Labels) > 0 {
			cfg.WriteString("        labels:\n")
			for k, v := range j.Labels {
				fmt.Fprintf(&cfg, "          %s: %q\n", k, v)
			}
		}
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	cmd := exec.Command(Bin, "--config.file="+path, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs soaktest.LockedBuilder // read while exec's copier may still write
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := soaktest.Reap(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want := fmt.Sprintf(`"value":[`)
	for {
		select {
		case <-exited:
			t.Fatalf("prometheus exited at start:\n%s", logs.String())
		case <-ctx.Done():
			t.Fatalf("prometheus did not scrape its %d targets within 60 s", n)
		case <-time.After(200 * time.Millisecond):
		}
		body, ok := get(ctx, base+"/api/v1/query?query=count(up%3D%3D1)")
		if ok && strings.Contains(body, want) && strings.Contains(body, fmt.Sprintf(`,"%d"]`, n)) {
			return base
		}
	}
}

func get(ctx context.Context, url string) (string, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.String(), resp.StatusCode == http.StatusOK
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
