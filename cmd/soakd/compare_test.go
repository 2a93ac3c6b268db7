package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/sweep"
)

// fixture runs: run1 grows 2 KiB a request, run2 200 B.
var (
	grows = filepath.Join("..", "..", "soak", "web", "testdata", "run1")
	flat  = filepath.Join("..", "..", "soak", "web", "testdata", "run2")
)

// TestCompareFixtures: run1 after run2 regressed on rss (exit 1; JSON,
// Markdown and JUnit say so, the line on stderr names the metric); run2
// after run1 did not regress (its slopes improved); a report.json and a
// samples.csv read as the run directory does.
func TestCompareFixtures(t *testing.T) {
	dir := t.TempDir()
	md, junit := filepath.Join(dir, "summary.md"), filepath.Join(dir, "junit.xml")
	var stdout, stderr bytes.Buffer
	code := run([]string{"compare", "--json", "--markdown", md, "--junit", junit, flat, grows}, &stdout, &stderr)
	if code != exitLeak {
		t.Fatalf("exit %d; want %d (regressed): %s", code, exitLeak, stderr.String())
	}
	var res struct {
		Verdict string `json:"verdict"`
		Metrics map[string]struct {
			Old, New, Difference float64
			CI95                 [2]*float64 `json:"ci95"`
			Margin               float64
			Verdict              string
		} `json:"metrics"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	rss := res.Metrics["rss_per_request"]
	if res.Verdict != "regressed" || rss.Verdict != "regressed" || rss.CI95[0] == nil || *rss.CI95[0] <= rss.Margin {
		t.Errorf("verdict %s, rss %+v; want regressed with the interval above the margin", res.Verdict, rss)
	}
	if line := stderr.String(); !strings.HasPrefix(line, "soakd compare: regressed") || !strings.Contains(line, "rss_per_request") {
		t.Errorf("stderr %q; want one line naming rss_per_request", line)
	}
	b, _ := os.ReadFile(md)
	if !strings.Contains(string(b), "| rss_per_request |") || !strings.Contains(string(b), "soakd compare: ❌ regressed") {
		t.Errorf("--markdown wrote %q; want the table with rss_per_request", b)
	}
	checkJUnit(t, junit, len(res.Metrics))

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"compare", filepath.Join(grows, "report.json"), filepath.Join(flat, "samples.csv")}, &stdout, &stderr); code == exitLeak || code == exitUsage {
		t.Errorf("run2 after run1: exit %d; want not regressed (0 or 4): %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "rss_per_request") || !strings.Contains(stdout.String(), "improved") {
		t.Errorf("text report lacks rss_per_request improved:\n%s", stdout.String())
	}
}

// checkJUnit checks the JUnit file: one test case per metric, one failure
// (rss and its kin regressed).
func checkJUnit(t *testing.T, path string, metrics int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b, &s); err != nil {
		t.Fatalf("--junit: %v\n%s", err, b)
	}
	failed := map[string]bool{}
	for _, c := range s.Cases {
		failed[c.Name] = c.Failure != nil
	}
	if s.Tests != metrics || len(s.Cases) != metrics || !failed["rss_per_request"] || s.Failures < 1 {
		t.Errorf("--junit: %d tests, %d cases, %d failures, rss failed %v; want %d cases and rss failed", s.Tests, len(s.Cases), s.Failures, failed["rss_per_request"], metrics)
	}
}

func TestCompareUsage(t *testing.T) {
	sweepDir := t.TempDir()
	rep := &sweep.Report{Levels: []sweep.Level{{Concurrency: 1, Throughput: 100}}, Knee: sweep.Knee{Cause: sweep.CauseNone}}
	if err := rep.WriteFiles(sweepDir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", flat}, "want two runs"},
		{[]string{"compare", "--cpu-margin", "-1", flat, grows}, "--cpu-margin"},
		{[]string{"compare", flat, "/nonexistent/run"}, "/nonexistent/run"},
		{[]string{"compare", "--daemon", "http://127.0.0.1:1", "x", "2"}, "run id"},
		{[]string{"compare", "--daemon", "ftp://h", "1", "2"}, "--daemon"},
		{[]string{"compare", flat, sweepDir}, "soakd compare: " + sweepDir + " is a sweep (its report.json holds levels and a knee), not a run: compare two runs"},
		{[]string{"compare", filepath.Join(sweepDir, "report.json"), flat}, "report.json is a sweep"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compare", "--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "4: inconclusive") {
		t.Errorf("--help: exit %d, %q; want 0 and the exit codes", code, stdout.String())
	}
}

// TestCompareDaemon: with --daemon, OLD and NEW are run ids, read from the
// daemon's API (the report, then the samples as CSV) with the token.
func TestCompareDaemon(t *testing.T) {
	dirs := map[string]string{"1": grows, "2": flat}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		id, samples := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/runs/"), "/samples")
		dir, ok := dirs[id]
		switch {
		case !ok:
			http.NotFound(w, r)
		case samples && r.URL.Query().Get("format") == "csv":
			http.ServeFile(w, r, filepath.Join(dir, "samples.csv"))
		case !samples:
			http.ServeFile(w, r, filepath.Join(dir, "report.json"))
		default:
			http.Error(w, "want format=csv", http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compare", "--daemon", srv.URL, "--token", "s3cret", "2", "1"}, &stdout, &stderr); code != exitLeak {
		t.Errorf("--daemon 2 1: exit %d; want %d (run 1 grows faster): %s", code, exitLeak, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"compare", "--daemon", srv.URL, "--token", "s3cret", "2", "9"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "404") {
		t.Errorf("--daemon 2 9: exit %d, %q; want %d and the daemon's 404", code, stderr.String(), exitUsage)
	}
}

// TestCompareSelf: a run compared with itself reads same, exit 0, in
// every format, with each margin shown beside its flag: the blocks are
// paired, so every block metric differs by exactly zero with an interval
// of [0, 0] (drawn apart, run1's own p99 read −71 % … +158 % against
// itself, and CPU per request −57 % … +71 %).
func TestCompareSelf(t *testing.T) {
	for _, dir := range []string{grows, flat} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"compare", dir, dir}, &stdout, &stderr)
		out := stdout.String()
		if code != exitOK || !strings.HasPrefix(out, "Verdict: same") {
			t.Errorf("%s against itself: exit %d; want 0 and same:\n%s%s", dir, code, out, stderr.String())
		}
		for _, flag := range []string{"(--latency-margin)", "(--latency-p99-margin)", "(--cpu-margin)", "(--throughput-margin)", "(--error-margin)", "(--leak-margin"} {
			if !strings.Contains(out, flag) {
				t.Errorf("%s against itself: the text lacks %s:\n%s", dir, flag, out)
			}
		}
		stdout.Reset()
		if code := run([]string{"compare", "--json", dir, dir}, &stdout, &stderr); code != exitOK {
			t.Errorf("--json: exit %d; want 0", code)
		}
		var res struct {
			Verdict string `json:"verdict"`
			Metrics map[string]struct {
				Relative   bool        `json:"relative"`
				Difference float64     `json:"difference"`
				CI95       [2]*float64 `json:"ci95"`
				MarginBy   string      `json:"margin_by"`
				Verdict    string      `json:"verdict"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		for name, m := range res.Metrics {
			if name == "stalled_seconds" && m.Verdict == "unjudged" {
				continue // shown only: no margin
			}
			if m.MarginBy == "" || (m.Relative && m.Verdict != "unjudged" && (m.Difference != 0 || m.CI95[0] == nil || *m.CI95[0] != 0 || *m.CI95[1] != 0)) {
				t.Errorf("%s against itself: %s %+v; want a margin_by, and a relative metric 0 within [0, 0]", dir, name, m)
			}
		}
	}
}
