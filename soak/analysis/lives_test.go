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

// preforkPileUp is a prefork server that does not leak, soaked in an open
// loop on a busy machine: three workers, each replaced after 150
// requests, each holding the load's connections, which pile up through
// its life from 1 to 20 as its requests slow (a worker's fds 9 → 28), as
// testdata/zoo's prefork-no-leak did under bench/busy.sh. The tree's fds
// net of the load stay flat. counted says the members carry their
// connections to soakd (probes.Member.LoadConns).
func preforkPileUp(counted bool) []model.Record {
	const (
		life     = 150 // requests per worker
		perTick  = 50  // requests per sample (200 req/s every 0.25 s)
		samples  = 60
		workers  = 3
		ownFDs   = 8
		rootFDs  = 10
		warmupAt = 6
	)
	type worker struct {
		pid    int32
		served int
	}
	ws := make([]worker, workers)
	next := int32(1000)
	for i := range ws {
		ws[i] = worker{pid: next, served: i * life / workers} // staggered lives
		next++
	}
	var recs []model.Record
	for s := range samples {
		r := model.Record{Sample: probes.Sample{Alive: true, Incarnation: 1, FDsValid: true, RSSValid: true, RSS: 40 << 20, Threads: 4, ThreadsValid: true},
			Elapsed: float64(s) * 0.25, Requests: uint64(s * perTick), Phase: verdict.Soak}
		if s < warmupAt {
			r.Phase = verdict.Warmup
		}
		r.Members = append(r.Members, probes.Member{PID: 1, Start: 1, RSS: 10 << 20, FDs: rootFDs, LoadConnsValid: counted})
		r.FDs = rootFDs
		for i := range ws {
			w := &ws[i]
			w.served += perTick / workers
			if w.served >= life {
				w.pid, w.served = next, w.served-life
				next++
			}
			conns := uint64(1 + 19*w.served/life)
			m := probes.Member{PID: w.pid, Start: uint64(w.pid), PPID: 1, RSS: 10 << 20, FDs: ownFDs + conns}
			if counted {
				m.LoadConns, m.LoadConnsValid = conns, true
			}
			r.Members = append(r.Members, m)
			r.FDs += m.FDs
			r.FDsNet += ownFDs
		}
		r.FDsNet += rootFDs
		r.FDsNetValid = true
		recs = append(recs, r)
	}
	return recs
}

// TestLivesNetOfTheLoad: the lives rule fits each process's fds net of
// its connections to soakd, so the load's connections piling up in a
// prefork worker are no leak; members without the count (a procs.csv
// written before it) are fitted on all their fds, as before, and read one.
func TestLivesNetOfTheLoad(t *testing.T) {
	for _, tc := range []struct {
		name    string
		counted bool
		leak    bool
	}{
		{"net of the load's connections", true, false},
		{"members without the count", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := Analyze(preforkPileUp(tc.counted), nil, Options{Resources: []string{"fds"}})
			fds := res["fds"]
			t.Logf("fds: %s %.3g fds/request masked_by %q: %s", fds.Verdict, fds.PerRequest, fds.MaskedBy, fds.Reason)
			if got := fds.Verdict == verdict.Leak; got != tc.leak {
				t.Errorf("fds verdict %s (masked by %q); want leak %v", fds.Verdict, fds.MaskedBy, tc.leak)
			}
		})
	}
}
