package web

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// longRun is a synthetic 8-hour run sampled every second (28,800 records)
// with a leak, RSS spikes, one restart after 5 h, PSS every 30 s, and the
// verdicts of the leak fixture.
func longRun(t testing.TB) *model.Report {
	rep := loadRun(t, "testdata/run1")
	const n = 8 * 3600
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	recs := make([]model.Record, n)
	var cpuU, cpuS float64
	inc, base := 1, 0.0
	for i := range recs {
		r := &recs[i]
		r.Time, r.Elapsed = start.Add(time.Duration(i)*time.Second), float64(i)
		r.Phase = verdict.Soak
		switch {
		case i < n/10:
			r.Phase = verdict.Warmup
		case i >= n-300:
			r.Phase = verdict.Cooldown
		}
		load := r.Phase != verdict.Cooldown
		if load {
			r.Requests = uint64(i) * 200
			r.Rate = 200 + 5*rng.NormFloat64()
			r.P50, r.P99 = 0.001*(1+0.1*rng.Float64()), 0.01*(1+rng.ExpFloat64())
		} else {
			r.Requests = recs[i-1].Requests
		}
		if i == 5*3600 {
			inc, base = 2, float64(recs[i-1].Requests)
			cpuU, cpuS = 0, 0
		}
		r.Alive, r.Incarnation, r.RootPID, r.Procs = true, inc, int32(1000+inc), 1
		r.RSSValid, r.ThreadsValid = true, true
		rss := 40e6 + 50*(float64(r.Requests)-base) + 2e6*rng.Float64()
		if i%3600 == 1800 {
			rss += 200e6 // a spike that display must keep
		}
		r.RSS = uint64(rss)
		if i%30 == 0 {
			r.SmapsValid, r.PSS, r.USS = true, uint64(0.9*rss), uint64(0.85*rss)
		}
		r.FDsValid, r.FDs, r.FDLimit = true, 20+uint64((float64(r.Requests)-base)/1e5), 1024
		r.Threads, r.TCPCloseWait = 8, int(math.Max(0, 3*rng.NormFloat64()))
		if load {
			cpuU += 0.2 + 0.05*rng.Float64()
			cpuS += 0.1 + 0.05*rng.Float64()
		}
		r.CPUUser, r.CPUSystem = math.Round(cpuU*100)/100, math.Round(cpuS*100)/100
	}
	rep.Records, rep.Samples = recs, n
	rss := rep.Resources["rss"]
	rss.PerRequest, rss.CI95, rss.Start = 50, [2]float64{48, 52}, 40e6
	rep.Resources["rss"] = rss
	rep.Target.Incarnations, rep.Target.Restarts = 2, 1
	return rep
}

func TestLongRunDisplay(t *testing.T) {
	rep := longRun(t)
	var b bytes.Buffer
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	// Seven charts of about 2×600 points per series stay well under this;
	// the raw 28,800 points per series would not.
	if b.Len() > 2<<20 {
		t.Errorf("page is %d bytes; want under 2 MiB", b.Len())
	}
	charts, err := runCharts(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 7 {
		t.Fatalf("charts = %d; want 7", len(charts))
	}
	for _, c := range charts {
		if !strings.Contains(string(c.SVG), ">restart</text>") {
			t.Errorf("chart %s does not mark the restart", c.ID)
		}
	}
}

func TestDecimate(t *testing.T) {
	spiky := make(plotter.XYs, 28800)
	for i := range spiky {
		spiky[i] = plotter.XY{X: float64(i), Y: float64(i % 7)}
	}
	spiky[12345].Y, spiky[20000].Y = 1000, -1000
	tests := []struct {
		name    string
		pts     plotter.XYs
		n       int
		maxLen  int
		keepYs  []float64
		wantLen int // 0: don't check
	}{
		{name: "short series untouched", pts: spiky[:100], n: 600, wantLen: 100},
		{name: "long series bounded, spikes kept", pts: spiky, n: 600, maxLen: 1200, keepYs: []float64{1000, -1000}},
		{name: "constant x", pts: xys(1, 1, 1, 5, 1, 3, 1, 2, 1, 0), n: 1, maxLen: 2, keepYs: []float64{5, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decimate(tt.pts, tt.n)
			if tt.wantLen > 0 && len(got) != tt.wantLen {
				t.Errorf("len = %d; want %d", len(got), tt.wantLen)
			}
			if tt.maxLen > 0 && len(got) > tt.maxLen {
				t.Errorf("len = %d; want at most %d", len(got), tt.maxLen)
			}
			for _, y := range tt.keepYs {
				found := false
				for _, p := range got {
					found = found || p.Y == y
				}
				if !found {
					t.Errorf("y = %g was dropped; want it kept", y)
				}
			}
			for i := 1; i < len(got); i++ {
				if got[i].X < got[i-1].X {
					t.Fatalf("x goes back at %d: %g after %g; want x order", i, got[i].X, got[i-1].X)
				}
			}
		})
	}
}

// BenchmarkRunReport8h renders the page of an 8-hour run at 1 s sampling.
func BenchmarkRunReport8h(b *testing.B) {
	rep := longRun(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := RunReport(io.Discard, rep, PageOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunReportLive renders the page of a running run as the daemon
// serves it: its live reservoir, at most 1024 records of any run.
func BenchmarkRunReportLive(b *testing.B) {
	rep := *longRun(b)
	step := len(rep.Records) / 1024
	thin := make([]model.Record, 0, 1025)
	for i := 0; i < len(rep.Records); i += step {
		thin = append(thin, rep.Records[i])
	}
	rep.Records = thin
	b.ReportAllocs()
	for b.Loop() {
		if err := RunReport(io.Discard, &rep, PageOptions{Live: true, RefreshSeconds: 5}); err != nil {
			b.Fatal(err)
		}
	}
}

// xys makes points from x, y pairs.
func xys(v ...float64) plotter.XYs {
	out := make(plotter.XYs, 0, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		out = append(out, plotter.XY{X: v[i], Y: v[i+1]})
	}
	return out
}
