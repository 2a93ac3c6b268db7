package daemon

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
	"github.com/soakd/soakd/soak/web"
)

// TestWithLive checks that a running run's row takes its requests and RSS
// growth from the live analysis when there is one.
func TestWithLive(t *testing.T) {
	live := &model.Report{
		Records:   []model.Record{{Requests: 10}, {Requests: 300}},
		Resources: map[string]verdict.Resource{"rss": {PerRequest: 4096}},
	}
	tests := []struct {
		name    string
		rep     *model.Report
		wantReq uint64
		wantRSS float64
	}{
		{"no live analysis", nil, 7, 1},
		{"live analysis", live, 300, 4096},
		{"no records, no rss", &model.Report{}, 7, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := web.RunView{Requests: 7, RSSPerRequest: 1}
			withLive(&v, tt.rep)
			if v.Requests != tt.wantReq || v.RSSPerRequest != tt.wantRSS {
				t.Errorf("got %d requests, %g B/request; want %d, %g", v.Requests, v.RSSPerRequest, tt.wantReq, tt.wantRSS)
			}
		})
	}
}

// TestDescribeLive checks the live report's target: the job's spec before
// a sample names the root, then the root's pid and command line.
func TestDescribeLive(t *testing.T) {
	ar := &activeRun{spec: "pidfile /run/x.pid"}
	if got := ar.describe(nil); got != "pidfile /run/x.pid" {
		t.Errorf("no samples: got %q; want the job's spec", got)
	}
	self := int32(os.Getpid())
	var rec model.Record
	rec.Alive, rec.RootPID = true, self
	got := ar.describe([]model.Record{rec})
	if want := "pid " + strconv.Itoa(int(self)) + " ("; !strings.HasPrefix(got, want) || strings.Contains(got, "(?)") {
		t.Errorf("got %q; want it to start %q and hold the command line", got, want)
	}
	if len(got) > probes.MaxCmdline+len("pid  ()")+10 {
		t.Errorf("got %d characters; want the command line cut at %d", len(got), probes.MaxCmdline)
	}
}
