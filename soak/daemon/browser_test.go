package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/browsertest"
	"github.com/soakd/soakd/soak/store"
)

// The browser helpers live in internal/browsertest, shared with
// soak/web's browser tests.
type netLog = browsertest.NetLog

func openPage(t *testing.T, ctx context.Context, url string) {
	browsertest.Open(t, ctx, url, 30*time.Second)
}

// pollJS evaluates js until check accepts its value.
func pollJS[T any](t *testing.T, ctx context.Context, what, js string, check func(T) error) T {
	t.Helper()
	var v T
	browsertest.Poll(t, what, 30*time.Second, func() error {
		var err error
		if v, err = browsertest.Eval[T](ctx, js); err != nil {
			return err
		}
		return check(v)
	})
	return v
}

// wantCharts checks that at least min charts render, each with a title.
func wantCharts(min int) func([]string) error {
	return func(titles []string) error {
		if len(titles) < min {
			return fmt.Errorf("rendered charts = %q; want at least %d", titles, min)
		}
		for _, s := range titles {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("a chart has no title: %q", titles)
			}
		}
		return nil
	}
}

// browserConfig is one job, "leaky", of a 15 s load at 300/s with a 2 s
// cool-down against tg.
func browserConfig(stateDir string, tg target) string {
	return fmt.Sprintf(`listen: 127.0.0.1:0
state_dir: %s
jobs:
  - name: leaky
    schedule: "@every 24h"
    max_duration: 2m
    target:
      pidfile: %s
    load:
      url: http://%s/
      rate: 300
      concurrency: 2
      duration: 15s
      keepalive: true
      timeout: 5s
    sampling:
      interval: 250ms
      smaps_interval: 1s
    phases:
      warmup: "10%%"
      cooldown: 2s
`, stateDir, tg.pidFile, tg.addr)
}

// rowBadges returns, for the index, the badge words of run id's row
// (status, verdict) and of job's row (last verdict, running).
const rowBadges = `((id, job) => {
	const words = el => el ? Array.from(el.querySelectorAll('.badge')).map(b => b.textContent.trim()).join(',') : 'missing';
	const run = Array.from(document.querySelectorAll('form tbody tr')).find(r => r.querySelector('a[href="/runs/' + id + '"]'));
	const jobRow = Array.from(document.querySelectorAll('#jobs-h ~ table tbody tr')).find(r => r.querySelector('th').textContent === job);
	return words(run) + ' | ' + words(jobRow);
})(%d, 'leaky')`

// runNumbers returns, for the index, the Requests and RSS per request
// cells of run id's row.
const runNumbers = `((id) => {
	const run = Array.from(document.querySelectorAll('form tbody tr')).find(r => r.querySelector('a[href="/runs/' + id + '"]'));
	if (!run) return 'missing';
	const nums = run.querySelectorAll('td.num');
	return nums[1].textContent.trim() + ' | ' + nums[2].textContent.trim();
})(%d)`

// TestBrowserDaemonPages opens the daemon's own pages in headless Chromium
// during and after a short run against a spawned leaky target, and checks
// that nothing is loaded from another host.
func TestBrowserDaemonPages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a soak and starts a browser")
	}
	ctx := browsertest.Start(t)
	tg := startTarget(t, "--leak-bytes", "4096", "--leak-fd-every", "50")
	d := startDaemon(t, parseConfig(t, browserConfig(t.TempDir(), tg)), Options{LiveInterval: time.Second})
	var reqs netLog
	reqs.Listen(t, ctx)

	id := startRun(t, d.url, "leaky", "")
	runURL := fmt.Sprintf("%s/runs/%d", d.url, id)
	// About 4 s in, so that the live page has soak samples to show.
	waitFor(t, 30*time.Second, "samples of the running run", func() bool { return sampleCount(t, d.url, id) >= 16 })
	started := time.Now()
	t.Run("during", func(t *testing.T) { checkDuring(t, ctx, d.url, runURL, id, &reqs, started) })

	waitFor(t, 60*time.Second, "the run to end", func() bool {
		return runStatus(t, d.url, "leaky", id).Status != store.StatusRunning
	})
	if r := runStatus(t, d.url, "leaky", id); r.Status != store.StatusCompleted || r.Verdict != "leak" {
		t.Fatalf("run %d: status %q, verdict %q, error %q; want completed, leak", id, r.Status, r.Verdict, r.Error)
	}
	t.Run("after", func(t *testing.T) { checkAfter(t, ctx, d.url, runURL, id) })

	if bad, n := reqs.Foreign(d.url); len(bad) > 0 || n == 0 {
		t.Errorf("requests to other hosts: %q (of %d requests); want none", bad, n)
	}
}

// checkDuring checks the index and the run's live page while it runs.
func checkDuring(t *testing.T, ctx context.Context, base, runURL string, id int64, reqs *netLog, started time.Time) {
	skipIfEnded(t, base, id, started, "the index")
	openPage(t, ctx, base+"/")
	got := pollJS(t, ctx, "run list during the run", fmt.Sprintf(rowBadges, id), func(s string) error {
		run, job, _ := strings.Cut(s, " | ")
		if !strings.Contains(run, "RUNNING") || !strings.Contains(job, "RUNNING") {
			return fmt.Errorf("run row | job row badges = %q; want the run and the job RUNNING", s)
		}
		return nil
	})
	t.Logf("index during the run: %s", got)
	browsertest.Poll(t, "the running run's requests on the index", 30*time.Second, func() error {
		openPage(t, ctx, base+"/")
		cells, err := browsertest.Eval[string](ctx, fmt.Sprintf(runNumbers, id))
		if err != nil {
			return err
		}
		if req, _, _ := strings.Cut(cells, " | "); req == "" || req == "0" || req == "missing" {
			return fmt.Errorf("requests | RSS per request = %q; want the live request count", cells)
		}
		return nil
	})
	browsertest.Screenshot(t, ctx, "daemon-index-live.png")

	// Count the page's loads from before it opens: on a busy machine the
	// checks below can outlast the run, and a reload that lands on the
	// final page (no refresh) before a later count would be missed.
	before := reqs.Count(runURL)
	skipIfEnded(t, base, id, started, "its live page")
	openPage(t, ctx, runURL)
	const js = `[document.querySelector('meta[http-equiv=refresh]') ? 'refresh' : 'none',
		(document.querySelector('.live .badge') || {}).textContent || '',
		'/', (document.querySelector('.verdict h2 .badge') || {}).textContent || 'no verdict badge'].join(' ')`
	got = pollJS(t, ctx, "live page", js, func(s string) error {
		if !strings.HasPrefix(s, "refresh") || !strings.Contains(s, "LIVE") || strings.HasSuffix(s, "no verdict badge") {
			return fmt.Errorf("page shows %q; want a refresh, the LIVE badge and a verdict badge", s)
		}
		return nil
	})
	t.Logf("live page: %s", got)
	const tjs = `(document.querySelector('#target-h ~ dl code') || {}).textContent || ''`
	got = pollJS(t, ctx, "live target", tjs, func(s string) error {
		if !strings.HasPrefix(s, "pid ") {
			return fmt.Errorf("target = %q; want the root's pid and command line", s)
		}
		return nil
	})
	t.Logf("live target: %s", got)
	titles := pollJS(t, ctx, "live charts", browsertest.ChartTitles, wantCharts(3))
	t.Logf("live charts: %q", titles)
	browsertest.Screenshot(t, ctx, "daemon-run-live.png")

	browsertest.Poll(t, "auto-refresh", 30*time.Second, func() error {
		if n := reqs.Count(runURL) - before; n < 2 {
			return fmt.Errorf("%d loads of %s since it was opened; want the open and a reload by itself", n, runURL)
		}
		return nil
	})
}

// skipIfEnded declines the live checks of a page about to be opened when
// the run has already ended: on a busy machine the checks before it can
// outlast the 15 s run, and a page opened after the end is rightly final.
// A page opened while the run runs must show it live.
func skipIfEnded(t *testing.T, base string, id int64, started time.Time, page string) {
	t.Helper()
	if r := runStatus(t, base, "leaky", id); r.Status != store.StatusRunning {
		t.Skipf("the run had ended (%s) before %s was opened, %.1f s after the live checks began: the machine was too slow for them", r.Status, page, time.Since(started).Seconds())
	}
}

// checkAfter checks the run's final page, the index and the comparison of
// the run with itself.
func checkAfter(t *testing.T, ctx context.Context, base, runURL string, id int64) {
	openPage(t, ctx, runURL)
	const js = `[document.querySelector('meta[http-equiv=refresh]') ? 'refresh' : 'final',
		document.querySelector('.live') ? 'live' : 'done',
		document.querySelector('.verdict h2 .badge').textContent.trim()].join(' ')`
	got := pollJS(t, ctx, "final page", js, func(s string) error {
		if !strings.HasPrefix(s, "final done ") || !strings.Contains(s, "LEAK") {
			return fmt.Errorf("page shows %q; want no refresh, no LIVE marker and a LEAK badge", s)
		}
		return nil
	})
	t.Logf("final page: %s", got)
	titles := pollJS(t, ctx, "final charts", browsertest.ChartTitles, wantCharts(5))
	t.Logf("charts: %q", titles)
	browsertest.Screenshot(t, ctx, "daemon-run.png")

	openPage(t, ctx, base+"/")
	got = pollJS(t, ctx, "run list after the run", fmt.Sprintf(rowBadges, id), func(s string) error {
		run, job, _ := strings.Cut(s, " | ")
		if !strings.Contains(run, "COMPLETED") || !strings.Contains(run, "LEAK") || !strings.Contains(job, "LEAK") {
			return fmt.Errorf("run row | job row badges = %q; want the run COMPLETED with LEAK and the job's last verdict LEAK", s)
		}
		return nil
	})
	t.Logf("index after the run: %s", got)
	browsertest.Screenshot(t, ctx, "daemon-index.png")

	openPage(t, ctx, fmt.Sprintf("%s/compare?a=%d&b=%d", base, id, id))
	const cjs = `Array.from(document.querySelectorAll('.side h3 .badge')).map(b => b.textContent.trim()).join(',')`
	pollJS(t, ctx, "compare sides", cjs, func(s string) error {
		if strings.Count(s, "LEAK") != 2 {
			return fmt.Errorf("compare verdict badges = %q; want LEAK twice", s)
		}
		return nil
	})
	pollJS(t, ctx, "compare chart", browsertest.ChartTitles, wantCharts(1))
	browsertest.Screenshot(t, ctx, "daemon-compare.png")
}
