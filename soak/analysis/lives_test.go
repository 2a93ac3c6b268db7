package analysis

import (
	"reflect"
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestLives follows processes by {PID, start}: a PID reused by a new
// process starts a new life, and a process whose fds were unreadable
// has no fds life.
func TestLives(t *testing.T) {
	a := func(rss, fds uint64) probes.Member { return probes.Member{PID: 10, Start: 100, RSS: rss, FDs: fds} }
	b := probes.Member{PID: 11, Start: 200, RSS: 20, NoFDs: true}
	c := func(rss, fds uint64) probes.Member { return probes.Member{PID: 10, Start: 300, RSS: rss, FDs: fds} }
	rec := func(sec float64, req uint64, inc int, ph verdict.Phase, ms ...probes.Member) model.Record {
		return model.Record{Sample: probes.Sample{Alive: true, Incarnation: inc, Members: ms}, Elapsed: sec, Requests: req, Phase: ph}
	}
	recs := []model.Record{
		rec(1, 100, 1, verdict.Warmup, a(1000, 5), b),
		rec(2, 250, 1, verdict.Soak, c(500, 3), a(1200, 6)),
		{Elapsed: 3, Requests: 300, Phase: verdict.Soak}, // the target was down
		rec(4, 400, 2, verdict.Cooldown, c(600, 4)),
	}
	pt := func(req, sec, v float64, inc int, ph verdict.Phase) verdict.Point {
		return verdict.Point{Requests: req, Seconds: sec, Value: v, Incarnation: inc, Phase: ph}
	}
	series := map[string]func(probes.Member) (float64, bool){}
	for _, res := range model.Resources {
		if res.Member != nil {
			series[res.Name] = res.Member
		}
	}
	for _, tc := range []struct {
		name string
		want [][]verdict.Point
	}{
		{"rss", [][]verdict.Point{
			{pt(100, 1, 1000, 1, verdict.Warmup), pt(250, 2, 1200, 1, verdict.Soak)},
			{pt(100, 1, 20, 1, verdict.Warmup)},
			{pt(250, 2, 500, 1, verdict.Soak), pt(400, 4, 600, 2, verdict.Cooldown)},
		}},
		{"fds", [][]verdict.Point{
			{pt(100, 1, 5, 1, verdict.Warmup), pt(250, 2, 6, 1, verdict.Soak)},
			{pt(250, 2, 3, 1, verdict.Soak), pt(400, 4, 4, 2, verdict.Cooldown)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			value, ok := series[tc.name]
			if !ok {
				t.Fatalf("resource %s has no per-process value", tc.name)
			}
			if got := lives(recs, value); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lives:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if len(series) != 2 {
		t.Errorf("resources with lives: %v; want rss and fds", series)
	}
}

// BenchmarkLives is the per-process lives of an hour sampled every second
// of a 20-process tree whose workers are replaced every 5 minutes.
func BenchmarkLives(b *testing.B) {
	recs := make([]model.Record, 3600)
	for i := range recs {
		ms := make([]probes.Member, 20)
		for j := range ms {
			ms[j] = probes.Member{PID: int32(1000 + j), Start: uint64(i / 300), RSS: uint64(i * 4096)}
		}
		recs[i] = model.Record{Sample: probes.Sample{Alive: true, Incarnation: 1, Members: ms}, Elapsed: float64(i), Requests: uint64(i * 100)}
	}
	value := func(m probes.Member) (float64, bool) { return float64(m.RSS), true }
	b.ReportAllocs()
	for b.Loop() {
		lives(recs, value)
	}
}
