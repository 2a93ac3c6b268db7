package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/internal/browsertest"
	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
)

// startTarget starts the leaky demo target on a loopback port from :0
// (soaktest.StartServer) and returns its URL and PID.
func startTarget(t *testing.T, args ...string) (string, int) {
	t.Helper()
	srv := soaktest.StartServer(t, soaktest.Binary(t, soaktest.Target), append(args, "--listen", "127.0.0.1:0", "--max-lifetime", "3m")...)
	return srv.URL, srv.PID
}

// liveRun is a run in progress, served as the daemon serves it: a live
// analysis of the samples so far, then the final report.
type liveRun struct {
	mu    sync.Mutex
	recs  []model.Record
	final *model.Report
	desc  string
	hits  atomic.Int64 // GETs of the run page
}

func (l *liveRun) add(r model.Record) {
	l.mu.Lock()
	l.recs = append(l.recs, r)
	l.mu.Unlock()
}

func (l *liveRun) samples() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recs)
}

// report returns the final report, or a live analysis and true.
func (l *liveRun) report() (*model.Report, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final != nil {
		return l.final, false
	}
	recs := append([]model.Record(nil), l.recs...)
	ti := model.TargetInfo{Description: l.desc, Probed: true}
	return analysis.NewReport(recs, nil, ti, analysis.Options{}), true
}

func (l *liveRun) handler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		rep, live := l.report()
		v := RunView{ID: 1, Job: "leaky", Status: "completed", Verdict: rep.Verdict, Started: rep.Started,
			Duration: rep.Ended.Sub(rep.Started), Requests: rep.Phases.WarmupRequests + rep.Phases.SoakRequests}
		if live {
			v.Status = "running"
		}
		if rss, ok := rep.Resources["rss"]; ok {
			v.RSSPerRequest = rss.PerRequest
		}
		d := IndexData{Now: time.Now(), Runs: []RunView{v},
			Jobs: []JobView{{Name: "leaky", Schedule: "@daily", LastVerdict: rep.Verdict, LastRunID: 1, Running: live}}}
		serve(t, w, func(b *bytes.Buffer) error { return Index(b, d) })
	})
	mux.HandleFunc("GET /runs/1", func(w http.ResponseWriter, r *http.Request) {
		l.hits.Add(1)
		rep, live := l.report()
		opt := PageOptions{RunID: 1, Job: "leaky", Live: live, RefreshSeconds: 2, Links: []Link{{"All runs", "/"}}}
		serve(t, w, func(b *bytes.Buffer) error { return RunReport(b, rep, opt) })
	})
	return mux
}

// serve renders a page whole, then writes it, as the daemon does: an error
// rendering fails the test, one writing does not (the page reloads every 2
// s, and a browser that navigates on closes the connection of the view it
// leaves: "write: broken pipe").
func serve(t *testing.T, w http.ResponseWriter, render func(*bytes.Buffer) error) {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		t.Error(err)
		return
	}
	w.Write(b.Bytes())
}

// TestBrowserLiveRun opens the run page during and after a short run
// against a spawned leaky target.
func TestBrowserLiveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a soak and starts a browser")
	}
	ctx := browser(t)
	url, pid := startTarget(t, "--leak-bytes", "4096", "--leak-fd-every", "50")
	lr := &liveRun{desc: fmt.Sprintf("pid %d (leaky demo target)", pid)}
	srv := httptest.NewServer(lr.handler(t))
	t.Cleanup(srv.Close)
	var reqs requestLog
	reqs.Listen(t, ctx)

	runCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		rep, err := runner.Run(runCtx, runner.Options{
			Load: load.Options{
				Endpoints: []load.Endpoint{{Weight: 1, Method: "GET", URL: url}},
				Rate:      200, Concurrency: 2, Duration: 12 * time.Second, Requests: 5000,
				KeepAlive: true, Timeout: 5 * time.Second,
			},
			Target:   probes.Spec{PID: pid, URL: url},
			Sampler:  probes.SamplerOptions{SmapsInterval: time.Second},
			Interval: 250 * time.Millisecond,
			Warmup:   runner.Warmup{Fraction: 0.2},
			Cooldown: 2 * time.Second,
			Log:      zaptest.NewLogger(t),
			OnRecord: lr.add,
		})
		if err == nil {
			lr.mu.Lock()
			lr.final = rep
			lr.mu.Unlock()
		}
		done <- err
	}()

	browsertest.Poll(t, "samples", time.Minute, func() error {
		if n := lr.samples(); n < 8 {
			return fmt.Errorf("%d samples so far; want 8", n)
		}
		return nil
	})
	t.Run("during", func(t *testing.T) {
		// Count the page's loads from before it opens: on a busy machine
		// the check below can outlast the run, and a reload that lands on
		// the final page (no refresh) before a later count would be missed.
		before := lr.hits.Load()
		if _, live := lr.report(); !live {
			t.Skipf("the run had ended before its page was opened (%d samples): the machine was too slow for the live checks", lr.samples())
		}
		open(t, ctx, srv.URL+"/runs/1")
		browsertest.Poll(t, "live page", 30*time.Second, func() error {
			got, err := browsertest.Eval[string](ctx, `[document.querySelector('meta[http-equiv=refresh]') ? 'refresh' : 'none',
				(document.querySelector('.live .badge') || {}).textContent || '',
				document.querySelectorAll('svg.chart title').length].join(' ')`)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(got, "refresh") || !strings.Contains(got, "LIVE") || strings.HasSuffix(got, " 0") {
				return fmt.Errorf("page shows %q; want a refresh, the LIVE badge and charts", got)
			}
			return nil
		})
		browsertest.Poll(t, "auto-refresh", 30*time.Second, func() error {
			if n := lr.hits.Load() - before; n < 2 {
				return fmt.Errorf("%d loads of the page since it was opened; want the open and a reload by itself", n)
			}
			return nil
		})
		screenshot(t, ctx, "web-live-during.png")
	})

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("soak run: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the soak run did not end within 2 minutes")
	}
	t.Run("after", func(t *testing.T) {
		open(t, ctx, srv.URL+"/runs/1")
		browsertest.Poll(t, "final page", 30*time.Second, func() error {
			got, err := browsertest.Eval[string](ctx, `[document.querySelector('meta[http-equiv=refresh]') ? 'refresh' : 'final',
				document.querySelector('.verdict h2 .badge').textContent.trim()].join(' ')`)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(got, "final ") {
				return fmt.Errorf("page shows %q; want no refresh after the run", got)
			}
			t.Logf("final page: %s", got)
			return nil
		})
		if titles := eval[[]string](t, ctx, chartTitles); len(titles) < 5 {
			t.Errorf("charts = %q; want at least 5", titles)
		}
		screenshot(t, ctx, "web-live-after.png")
		open(t, ctx, srv.URL+"/")
		if rows := eval[int](t, ctx, `document.querySelectorAll('form tbody tr').length`); rows != 1 {
			t.Errorf("run rows = %d; want 1", rows)
		}
		screenshot(t, ctx, "web-live-index.png")
	})
	if bad, n := reqs.Foreign(srv.URL); len(bad) > 0 || n == 0 {
		t.Errorf("requests to other hosts: %q (of %d requests); want none", bad, n)
	}
}
