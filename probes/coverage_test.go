package probes

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestLiveCover: with the target chosen by PID, its own port is covered,
// another server's port is named with that server's PID, and a closed
// port and a host elsewhere are named as such.
func TestLiveCover(t *testing.T) {
	a := startServer(t, "127.0.0.1:0")
	b := startServer(t, "127.0.0.1:0")
	tg := openLive(t, Spec{PID: a.pid})
	ctx := context.Background()
	for _, c := range []struct {
		url     string
		covered bool
		why     string
	}{
		{"http://" + a.addr + "/x", true, ""},
		{"http://" + b.addr + "/", false, fmt.Sprintf("pid %d (", b.pid)},
		{fmt.Sprintf("http://127.0.0.1:%d/", freePort(t)), false, "no process listens on it here"},
		{"http://192.0.2.1:80/", false, "not on this machine"}, // TEST-NET-1
	} {
		got := tg.Cover(ctx, c.url)
		if got.Covered != c.covered || !strings.Contains(got.Why, c.why) {
			t.Errorf("Cover(%s) = %+v; want covered %v, why containing %q", c.url, got, c.covered, c.why)
		}
		if !c.covered && !strings.Contains(got.String(), got.Addr+" (") {
			t.Errorf("Coverage.String() = %q; want the address, then why", got.String())
		}
	}
	if got := tg.Cover(ctx, "http://"+b.addr+"/"); !strings.Contains(got.Why, "not in the sampled tree") {
		t.Errorf("another server: why %q; want it to say it is not in the sampled tree", got.Why)
	}
	byPort := openLive(t, Spec{URL: "http://" + b.addr + "/"})
	if got := byPort.Cover(ctx, "http://"+b.addr+"/other"); !got.Covered {
		t.Errorf("the port the target was found by: %+v; want covered", got)
	}
}
