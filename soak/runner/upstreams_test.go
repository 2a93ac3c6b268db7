package runner

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// fakeUpstreams answers each look with ups and records what was followed.
type fakeUpstreams struct {
	ups      []probes.Upstream
	looks    int
	followed []int32
}

func (f *fakeUpstreams) Upstreams(context.Context) []probes.Upstream { f.looks++; return f.ups }
func (f *fakeUpstreams) Follow(u probes.Upstream) bool {
	f.followed = append(f.followed, u.PID)
	return true
}

func TestUpstreamWatchFollowsBeforeTheSoakOnly(t *testing.T) {
	py := probes.Upstream{Addr: "127.0.0.1:9000", Via: "nginx", ViaPID: 11, PID: 20, Start: 2000, Name: "python3"}
	py2 := py
	py2.Addr = "127.0.0.1:9100" // the same server on another port
	unknown := probes.Upstream{Addr: "127.0.0.1:9200", Via: "nginx", ViaPID: 11, Why: "no process here owns its listening socket"}
	t0 := time.Unix(1000, 0)
	rec := func(sec float64, ph verdict.Phase) model.Record {
		return model.Record{Sample: probes.Sample{Time: t0.Add(time.Duration(sec * float64(time.Second))), Alive: true}, Elapsed: sec, Phase: ph}
	}
	tests := []struct {
		name      string
		follow    bool
		recs      []model.Record
		seen      float64 // when the upstream appears
		followed  []int32
		stale     bool
		wantNotes []string
	}{
		{"named only", false, []model.Record{rec(0, verdict.Baseline), rec(1, verdict.Warmup)}, 1, nil, false, []string{"", "", ""}},
		{"followed in the warm-up after a baseline", true, []model.Record{rec(0, verdict.Baseline), rec(1, verdict.Warmup)}, 1, []int32{20}, true,
			[]string{"the baseline, sampled without it, is left out of the analysis", "the baseline, sampled without it, is left out of the analysis", "its server is not known, so it cannot be followed"}},
		{"followed in the warm-up, no baseline", true, []model.Record{rec(0, verdict.Warmup), rec(1, verdict.Warmup)}, 1, []int32{20}, false,
			[]string{"", "", "its server is not known, so it cannot be followed"}},
		{"first seen in the soak", true, []model.Record{rec(0, verdict.Warmup), rec(5, verdict.Soak)}, 5, nil, false,
			[]string{"first seen in the soak, at 5.0 s: not followed, as its level joining mid-soak would read as growth; lengthen the warm-up so that the proxy opens its connections in it", "first seen in the soak, at 5.0 s: not followed, as its level joining mid-soak would read as growth; lengthen the warm-up so that the proxy opens its connections in it", "its server is not known, so it cannot be followed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeUpstreams{}
			w := &upstreamWatch{src: f, follow: tc.follow, log: zaptest.NewLogger(t)}
			for _, r := range tc.recs {
				if r.Elapsed >= tc.seen {
					f.ups = []probes.Upstream{py, py2, unknown}
				}
				w.observe(context.Background(), r)
				w.observe(context.Background(), r) // too soon: no look
			}
			if f.looks != len(tc.recs) {
				t.Errorf("looks = %d; want one per record, none when too soon", f.looks)
			}
			got := w.upstreams()
			if len(got) != 3 {
				t.Fatalf("upstreams %+v; want 3", got)
			}
			if len(f.followed) != len(tc.followed) || (len(f.followed) > 0 && f.followed[0] != tc.followed[0]) {
				t.Errorf("followed %v; want %v (the same server on a second port once)", f.followed, tc.followed)
			}
			for i, u := range got {
				if u.Note != tc.wantNotes[i] || u.SeenSeconds != tc.seen || u.Followed != (tc.followed != nil && u.PID != 0) {
					t.Errorf("upstream %d: %+v; want note %q, seen at %g s", i, u, tc.wantNotes[i], tc.seen)
				}
			}
			if w.baselineStale != tc.stale {
				t.Errorf("baseline left out = %v; want %v", w.baselineStale, tc.stale)
			}
			recs := w.analysisRecords(tc.recs)
			if tc.stale && recs[0].Phase == verdict.Baseline || !tc.stale && len(recs) != len(tc.recs) {
				t.Errorf("analysis records %d of %d; want the baseline left out only when stale", len(recs), len(tc.recs))
			}
		})
	}
}
