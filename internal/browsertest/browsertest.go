// Package browsertest drives a headless Chromium for the tests of soakd's
// web pages (soak/web and the daemon): it starts the browser with the flags
// this workplace needs, records every request the page makes, and saves
// screenshots. Only tests import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's chromium, which .ci/run installs.
const ChromiumPath = "/usr/bin/chromium"

// ChartTitles is a script that lists the title of each rendered chart that
// has a size on the page.
const ChartTitles = `Array.from(document.querySelectorAll('svg.chart[role=img]'))
	.filter(s => s.getBoundingClientRect().width > 300 && s.getBoundingClientRect().height > 100)
	.map(s => (s.querySelector('title') || {}).textContent || '')`

// Start starts a headless Chromium for the test, or skips the test when
// there is none outside CI (in CI a missing browser fails it). The flags
// keep Chromium from reaching any other host on its own: without the
// background-networking ones it tries, and this machine refuses. It
// returns a chromedp context whose browser has started.
func Start(t testing.TB) context.Context {
	t.Helper()
	if _, err := exec.LookPath(ChromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (CI must install chromium)", ChromiumPath, err)
		}
		t.Skipf("%s: %v", ChromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelC(); cancelA() })
	// The first Run starts the browser and binds it to ctx: no timeout here.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// NetLog records the URL of every request the browser's page makes.
type NetLog struct {
	mu   sync.Mutex // guards urls
	urls []string
}

// Listen starts recording the requests made in ctx's browser.
func (l *NetLog) Listen(t testing.TB, ctx context.Context) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			l.mu.Lock()
			l.urls = append(l.urls, e.Request.URL)
			l.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listening to network events: %v", err)
	}
}

// Count returns how many requests went to url exactly.
func (l *NetLog) Count(url string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, u := range l.urls {
		if u == url {
			n++
		}
	}
	return n
}

// Foreign returns the requests that went anywhere but origin or data:, and
// the number of requests in all.
func (l *NetLog) Foreign(origin string) (out []string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.urls {
		if u != origin && !strings.HasPrefix(u, origin+"/") && !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	return out, len(l.urls)
}

// Poll runs check until it returns nil, or fails the test after d.
func Poll(t testing.TB, what string, d time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v (after %s)", what, err, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Open navigates to url and waits, up to d, for the page's main element.
func Open(t testing.TB, ctx context.Context, url string, d time.Duration) {
	t.Helper()
	nctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	// A live page reloads itself (meta refresh). When its reload starts
	// while this navigation is under way, Chromium aborts one of the two
	// and the navigation fails with net::ERR_ABORTED (a CI run hit it
	// opening a run's page just after the run ended). The abort says
	// nothing about the page asked for, so try again, a few times.
	var err error
	for try := 0; try < 3; try++ {
		err = chromedp.Do(nctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("main")))
		if err == nil || !strings.Contains(err.Error(), "net::ERR_ABORTED") {
			break
		}
		t.Logf("opening %s: %v; trying again", url, err)
	}
	if err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

// Eval evaluates js in the page. A page that reloads itself may make it
// fail, so callers poll.
func Eval[T any](ctx context.Context, js string) (T, error) {
	ectx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return chromedp.Run(ectx, chromedp.Evaluate[T](js))
}

// Screenshot saves a full-page PNG named name to $SOAKD_ARTIFACTS, else to
// a temporary folder, and logs the path.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	var buf []byte
	Poll(t, "screenshot "+name, 30*time.Second, func() error {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		var err error
		buf, err = chromedp.Run(sctx, chromedp.FullScreenshot(100))
		return err
	})
	dir := os.Getenv("SOAKD_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
