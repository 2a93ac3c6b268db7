package daemon

import (
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
)

// TestLiveAnalysisKnowsTheCollector: the live analysis learns the root's
// garbage-collected runtime from the first sample that names a local
// root (here this Go test binary), so that its endpoint split is not
// judged before the run's report; a remote root is not looked up here.
func TestLiveAnalysisKnowsTheCollector(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry(), "collector")
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{m: m, log: zap.NewNop()}
	rec := model.Record{Sample: probes.Sample{Alive: true, Incarnation: 1, RootPID: int32(os.Getpid())}}
	for _, local := range []bool{true, false} {
		ar := &activeRun{job: "collector", log: zap.NewNop(), local: local}
		d.onRecord(ar, rec)
		want := ""
		if local {
			want = "Go"
		}
		if ar.ao.Collector != want || ar.ti.Collector != want {
			t.Errorf("local %v: analysis collector %q, target %q; want %q", local, ar.ao.Collector, ar.ti.Collector, want)
		}
	}
}
