package web

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/soakd/soakd/internal/browsertest"
	"github.com/soakd/soakd/soak/model"
)

// The browser helpers are shared with the daemon's browser test.
var browser = browsertest.Start

type requestLog = browsertest.NetLog

const chartTitles = browsertest.ChartTitles

func screenshot(t *testing.T, ctx context.Context, name string) {
	browsertest.Screenshot(t, ctx, name)
}

// open navigates to url and waits for the page's main element.
func open(t *testing.T, ctx context.Context, url string) {
	browsertest.Open(t, ctx, url, 60*time.Second)
}

// fixtureServer serves the index, the run pages and the comparison of the
// stored fixture runs, as the daemon mounts them.
func fixtureServer(t *testing.T, runs map[int64]*model.Report, views []RunView, live map[int64]bool) *httptest.Server {
	mux := http.NewServeMux()
	view := func(id int64) RunView {
		for _, v := range views {
			if v.ID == id {
				return v
			}
		}
		return RunView{ID: id}
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		ix := sampleIndex()
		ix.Runs = views
		serve(t, w, func(b *bytes.Buffer) error { return Index(b, ix) })
	})
	mux.HandleFunc("GET /runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		rep, ok := runs[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		opt := PageOptions{RunID: id, Job: view(id).Job, Live: live[id], RefreshSeconds: 2, Links: []Link{{"All runs", "/"}}}
		serve(t, w, func(b *bytes.Buffer) error { return RunReport(b, rep, opt) })
	})
	mux.HandleFunc("GET /compare", func(w http.ResponseWriter, r *http.Request) {
		a, _ := strconv.ParseInt(r.FormValue("a"), 10, 64)
		b, _ := strconv.ParseInt(r.FormValue("b"), 10, 64)
		if runs[a] == nil || runs[b] == nil {
			http.NotFound(w, r)
			return
		}
		serve(t, w, func(buf *bytes.Buffer) error { return Compare(buf, runs[a], runs[b], view(a), view(b), nil) })
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	ctx := browser(t)
	run1, run2 := loadRun(t, "testdata/run1"), loadRun(t, "testdata/run2")
	views := sampleIndex().Runs[1:]
	srv := fixtureServer(t, map[int64]*model.Report{2: run1, 1: run2}, views, nil)
	var log requestLog
	log.Listen(t, ctx)

	t.Run("run page", func(t *testing.T) {
		open(t, ctx, srv.URL+"/runs/2")
		if got := eval[string](t, ctx, `document.querySelector('.verdict h2 .badge').textContent.trim()`); !strings.Contains(got, "LEAK") {
			t.Errorf("verdict badge = %q; want LEAK", got)
		}
		titles := eval[[]string](t, ctx, chartTitles)
		if len(titles) != 7 {
			t.Errorf("rendered charts = %q; want 7", titles)
		}
		for _, title := range titles {
			if title == "" {
				t.Errorf("a chart has no title: %q", titles)
			}
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('table').length`); n < 5 {
			t.Errorf("tables = %d; want at least 5", n)
		}
		// A 1200 px window (less than the 1280 px the issue saw overflow):
		// every table fits its box, no sideways scrolling.
		const wide = `Array.from(document.querySelectorAll('.scroll')).filter(s => s.scrollWidth > s.clientWidth).map(s => s.querySelector('caption') ? s.querySelector('caption').textContent : '?')`
		if over := eval[[]string](t, ctx, wide); len(over) > 0 {
			t.Errorf("tables wider than the page at %d px: %q", eval[int](t, ctx, `window.innerWidth`), over)
		}
		screenshot(t, ctx, "web-run.png")
	})
	t.Run("print", func(t *testing.T) {
		open(t, ctx, srv.URL+"/runs/2")
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
			t.Fatalf("emulating print media: %v", err)
		}
		t.Cleanup(func() { chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}) })
		const js = `[getComputedStyle(document.querySelector('nav')).display,
			Math.max(...Array.from(document.querySelectorAll('svg.chart')).map(s => s.getBoundingClientRect().right))
				<= document.documentElement.clientWidth].join(' ')`
		if got := eval[string](t, ctx, js); got != "none true" {
			t.Errorf("print: nav display and charts within the page = %q; want \"none true\"", got)
		}
		screenshot(t, ctx, "web-run-print.png")
	})
	t.Run("index", func(t *testing.T) {
		open(t, ctx, srv.URL+"/")
		rows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('form tbody tr th a')).map(a => a.textContent)`)
		if strings.Join(rows, " ") != "#2 #1" {
			t.Errorf("run list = %q; want [#2 #1]", rows)
		}
		badges := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#jobs-h ~ table .badge')).map(b => b.textContent.trim())`)
		if len(badges) < 3 || !strings.Contains(badges[0], "LEAK") {
			t.Errorf("job badges = %q; want LEAK first", badges)
		}
		screenshot(t, ctx, "web-index.png")
	})
	t.Run("compare", func(t *testing.T) {
		open(t, ctx, srv.URL+"/")
		nctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		err := chromedp.Do(nctx, chromedp.Click(chromedp.CSS(`form[action="/compare"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#chart-compare`)))
		if err != nil {
			t.Fatalf("submitting the compare form: %v", err)
		}
		q := `(p => p.get('a') + ',' + p.get('b'))(new URLSearchParams(location.search))`
		if got := eval[string](t, ctx, q); got != "1,2" {
			t.Errorf("compare runs a,b = %q; want 1,2", got)
		}
		if titles := eval[[]string](t, ctx, chartTitles); len(titles) != 1 {
			t.Errorf("compare charts = %q; want 1", titles)
		}
		const fits = `(s => s.scrollWidth <= s.clientWidth)(document.querySelector('#slopes-h ~ .scroll'))`
		if !eval[bool](t, ctx, fits) {
			t.Errorf("the slopes table is wider than its box; want it to fit the page")
		}
		screenshot(t, ctx, "web-compare.png")
		// On paper: print media on a 700 px wide page (A4 less margins).
		t.Cleanup(func() {
			chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
			chromedp.Call(ctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		})
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
			t.Fatalf("emulating print media: %v", err)
		}
		if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 700, Height: 900, DeviceScaleFactor: 1}); err != nil {
			t.Fatalf("emulating a 700 px page: %v", err)
		}
		const right = `document.querySelector('#slopes-h ~ .scroll table').getBoundingClientRect().right <= document.documentElement.clientWidth`
		if !eval[bool](t, ctx, right) {
			t.Errorf("print: the slopes table runs past the 700 px page; want it within")
		}
		screenshot(t, ctx, "web-compare-print.png")
	})
	if bad, n := log.Foreign(srv.URL); len(bad) > 0 || n == 0 {
		t.Errorf("requests to other hosts: %q (of %d requests); want none", bad, n)
	}
	if res := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map(e => e.name)`); len(res) > 0 {
		t.Errorf("the page loaded subresources %q; want none", res)
	}
}
