package runner_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
)

// TestEndToEndUnsampledEndpointIsNamed: a load over two servers, of which
// only the first is sampled (by its PID), names the second with its PID
// in the report and warns of it in the log; the first is not named.
func TestEndToEndUnsampledEndpointIsNamed(t *testing.T) {
	t.Parallel()
	urlA, pidA := startTarget(t)
	urlB, pidB := startTarget(t)
	core, logs := observer.New(zapcore.WarnLevel)
	o := runner.Options{
		Load: load.Options{
			Endpoints: []load.Endpoint{{Weight: 1, URL: urlA}, {Weight: 1, URL: urlB + "/other"}},
			Rate:      100, Concurrency: 4, Duration: 3 * time.Second, KeepAlive: true, Timeout: 5 * time.Second,
		},
		Interval: 250 * time.Millisecond,
		Baseline: -1,
		Log:      zap.New(core),
	}
	o.Target.PID, o.Target.URL = pidA, urlA
	rep := runSoak(t, o)
	hostB := mustHost(t, urlB)
	want := fmt.Sprintf("%s (pid %d (", hostB, pidB)
	if len(rep.Target.Unsampled) != 1 || !strings.HasPrefix(rep.Target.Unsampled[0], want) ||
		!strings.HasSuffix(rep.Target.Unsampled[0], "not in the sampled tree)") {
		t.Errorf("unsampled %q; want one entry starting %q and saying it is not in the sampled tree", rep.Target.Unsampled, want)
	}
	if w := logs.FilterMessageSnippet("an endpoint's server is not sampled").All(); len(w) != 1 || w[0].ContextMap()["endpoint"] != hostB {
		t.Errorf("warnings %+v; want one naming %s", w, hostB)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "WARNING: endpoint "+want) || strings.Contains(b.String(), "endpoint "+mustHost(t, urlA)) {
		t.Errorf("report does not warn of %s alone:\n%s", hostB, b.String())
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
