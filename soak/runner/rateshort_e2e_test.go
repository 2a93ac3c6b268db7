package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
)

// TestRateShortfallSaid: an open loop at 200 req/s with one request in
// flight against a server that takes 20 ms per request reaches at most
// 50 req/s; the report says so (rate_shortfall, and the text's first
// line). A busy machine only lowers the rate reached.
func TestRateShortfallSaid(t *testing.T) {
	url, pid := startTarget(t, "--sleep", "20ms")
	rep := soakTuned(t, url, pid, load.Options{Rate: 200, Concurrency: 1, Duration: 3 * time.Second}, func(o *runner.Options) {
		o.Baseline = -1
	})
	if rep.Load == nil || rep.Load.RPS > 55 {
		t.Fatalf("load = %+v; want at most 55 req/s (one in flight, 20 ms each)", rep.Load)
	}
	want := "the open loop reached "
	if !strings.HasPrefix(rep.RateShortfall, want) || !strings.Contains(rep.RateShortfall, "of the 200 req/s requested") {
		t.Errorf("rate_shortfall = %q; want %q… of the 200 req/s requested", rep.RateShortfall, want)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "LOAD BELOW RATE: "+rep.RateShortfall) {
		t.Errorf("report text starts %.200q; want the shortfall first", b.String())
	}
}
