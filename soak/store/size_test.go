package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// runRecords is a run's worth of realistic samples of a tree of procs
// processes: values that move from sample to sample as in a soak
// (seeded), workers that are replaced now and then, and the members the
// sampler lists (with members false, none, as before they existed).
func runRecords(n, procs int, members bool) []model.Record {
	rng := rand.New(rand.NewPCG(uint64(procs), 7))
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	type proc struct {
		pid      int32
		start    uint64
		rss, cpu float64
	}
	tree := make([]proc, procs)
	nextPID := int32(481200)
	for i := range tree {
		tree[i] = proc{pid: nextPID, start: 91234567, rss: 8e6}
		nextPID++
	}
	recs := make([]model.Record, n)
	for i := range recs {
		at := start.Add(time.Duration(i)*time.Second + time.Duration(rng.IntN(3e6)))
		r := model.Record{
			Sample: probes.Sample{Time: at, Alive: true, RootPID: tree[0].pid, RootStart: tree[0].start, Incarnation: 1,
				Procs: procs, RSSValid: true, ThreadsValid: true, FDsValid: true, FDLimit: 1048576, IOValid: true, TCPValid: true, TCPListen: 1},
			Elapsed: at.Sub(start).Seconds(), Phase: verdict.Soak, Requests: uint64(i)*1500 + uint64(rng.IntN(100)),
			Rate: 1500 + rng.Float64()*10, P50: 0.0007 + rng.Float64()*1e-4, P99: 0.002 + rng.Float64()*1e-3,
		}
		r.SelfUser, r.SelfSystem, r.SelfRSS = float64(i)*0.03, float64(i)*0.02, 14e6+uint64(rng.IntN(1e5))
		r.CtxVoluntary, r.CtxInvol = uint64(i)*3000, uint64(i)*20
		r.ReadChars, r.WriteChars = uint64(i)*150000, uint64(i)*340000
		for j := range tree {
			p := &tree[j]
			if j > 0 && rng.IntN(30) == 0 { // a worker replaced
				*p = proc{pid: nextPID, start: 91234567 + uint64(i)*100, rss: 8e6}
				nextPID++
			}
			p.rss += float64(rng.IntN(300000))
			p.cpu += 0.01 * float64(rng.IntN(5))
			rss := uint64(p.rss) &^ 4095
			r.RSS += rss
			r.VMS += rss * 4
			r.FDs += 12
			r.Threads++
			r.CPUUser += p.cpu * 0.6
			r.CPUSystem += p.cpu * 0.4
			if members {
				r.Members = append(r.Members, probes.Member{PID: p.pid, Start: p.start, PPID: tree[0].pid, Name: "php-fpm",
					RSS: rss, FDs: 12, Threads: 1, CPU: float64(int(p.cpu*100)) / 100})
			}
		}
		if members {
			r.Top = make([]probes.ProcStat, min(5, procs))
			for k := range r.Top {
				r.Top[k] = r.Members[k].Stat()
			}
		} else {
			r.Top = make([]probes.ProcStat, min(5, procs))
			for k := range r.Top {
				p := tree[k]
				r.Top[k] = probes.ProcStat{PID: p.pid, Name: "php-fpm", RSS: uint64(p.rss) &^ 4095, FDs: 12, Threads: 1,
					CPU: float64(int(p.cpu*100)) / 100}
			}
		}
		recs[i] = r
	}
	return recs
}

// TestStoredSampleSize reports the stored bytes per sample (the zstd frame
// against this build's dictionary) of a 1- and a 20-process tree, with and
// without members, and checks that members round-trip through the store.
// Run with -v to see the figures.
func TestStoredSampleSize(t *testing.T) {
	s := openTest(t, t.TempDir())
	for _, procs := range []int{1, 20} {
		for _, members := range []bool{false, true} {
			recs := runRecords(600, procs, members)
			total := 0
			for _, r := range recs {
				b, err := s.codec.encode(r)
				if err != nil {
					t.Fatal(err)
				}
				total += len(b)
			}
			t.Logf("%2d processes, members %-5v: %4d bytes per stored sample", procs, members, total/len(recs))
		}
	}
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	want := runRecords(3, 20, true)
	for _, r := range want {
		if err := s.AppendSample(id, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Samples(id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if g, w := fmt.Sprint(got[i].Members), fmt.Sprint(want[i].Members); g != w || len(got[i].Members) != 20 {
			t.Errorf("sample %d members:\n got %s\nwant %s", i, g, w)
		}
	}
}
