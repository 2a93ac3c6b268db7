package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestOpenAReloadingPage opens a page that reloads itself every
// second, again and again at about that pace, so that some opens start
// while the page's own reload does: Chromium aborts one of the two
// (net::ERR_ABORTED), and Open must still open the page.
func TestOpenAReloadingPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(w, `<!doctype html><html><head><meta http-equiv="refresh" content="1"></head><body><main>live</main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	ctx := Start(t)
	for i := 0; i < 25; i++ {
		time.Sleep(time.Duration(900+i%10*20) * time.Millisecond)
		Open(t, ctx, srv.URL+"/run", 10*time.Second)
	}
}
