package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// busyRecords is a minute's soak at 2000 req/s on a 2-core machine whose
// other work rises from 0.3 to 1.8 cores (with a 15 s wobble); each core of it
// costs the target 30 % more CPU per request, and rise more over the
// soak. The machine's CPU and the run queue are read every third second,
// as with the thread pass.
func busyRecords(rise float64) []model.Record {
	var recs []model.Record
	var cpu, busy, wait float64
	for i := range 61 {
		f := float64(i) / 60
		z := 0.3 + 1.5*f + 0.5*math.Sin(2*math.Pi*float64(i)/15)
		r := model.Record{Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(2000 * i)}
		r.Alive, r.Incarnation, r.CPUUser, r.RunqueueWait = true, 1, cpu, wait
		r.HostCPUs, r.HostCPUTotal, r.HostCPUBusy = 2, 2*float64(i), busy
		if i%3 == 0 {
			r.HostCPUValid, r.RunqueueValid = true, true
		}
		recs = append(recs, r)
		step := 2000 * 100e-6 * (1 + 0.3*z) * (1 + rise*f)
		cpu, busy, wait = cpu+step, busy+z+step, wait+z/2*step
	}
	return recs
}

func TestCostSeriesCarriesTheContention(t *testing.T) {
	recs := busyRecords(0)
	win := windowOf(recs, recs[0], recs[len(recs)-1])
	at, cost, c := costSeries(win, 1)
	if len(at) < 50 || len(c.Others) != len(cost) || len(c.Wait) != len(cost) {
		t.Fatalf("got %d windows, %d and %d contention figures; want about 60 of each", len(at), len(c.Others), len(c.Wait))
	}
	first, last := c.Others[0], c.Others[len(c.Others)-1]
	if first < 0 || first > 1 || last < 1.2 || last > 2.4 {
		t.Errorf("other work %.2f to %.2f cores; want about 0.3 to 1.8", first, last)
	}
}

// A cost that follows the machine's contention is no CPU leak: the run
// is not "leak" and the report never says "a CPU leak"; the same
// contention with a +50 % rise of its own is one, and the run is "leak".
func TestContendedCostVerdictAgrees(t *testing.T) {
	for _, tc := range []struct {
		name string
		rise float64
		want bool
	}{
		{"the contention explains the rise", 0, false},
		{"a CPU leak beyond the contention", 0.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti := model.TargetInfo{Probed: true, Description: "synthetic"}
			rep := NewReport(busyRecords(tc.rise), nil, ti, Options{CPUs: 2})
			d := rep.CPU.Cost
			var b strings.Builder
			rep.WriteText(&b)
			text := b.String()
			if d.Rising != tc.want || strings.Contains(text, "a CPU leak") != tc.want {
				t.Errorf("cost drift %+v; want rising %v, and \"a CPU leak\" in the text only then:\n%s", d, tc.want, text)
			}
			if (rep.Verdict == verdict.OverallLeak) != tc.want {
				t.Errorf("verdict %s; want leak %v", rep.Verdict, tc.want)
			}
			if !tc.want && (!d.Inconclusive || !strings.Contains(text, "CPU per request inconclusive")) {
				t.Errorf("cost drift %+v; want inconclusive, said in the text:\n%s", d, text)
			}
		})
	}
}

// TestMeanWorkersSkipsUnreadRecords: a record whose threads were not read
// (the target gone between samples, /proc unreadable) holds zeros that are
// no reading; the mean is over the records that read them.
func TestMeanWorkersSkipsUnreadRecords(t *testing.T) {
	var win []*model.Record
	for i := range 10 {
		r := &model.Record{}
		if i%2 == 0 {
			r.Alive, r.ThreadsValid, r.Threads, r.Procs = true, true, 8, 4
		}
		win = append(win, r)
	}
	threads, procs := meanWorkers(win)
	if threads != 8 || procs != 4 {
		t.Fatalf("meanWorkers = %g threads, %g procs over half-unread records; want 8 and 4", threads, procs)
	}
	win[2].ThreadsValid = false // alive, procs read, threads not
	if threads, procs = meanWorkers(win); threads != 8 || procs != 4 {
		t.Fatalf("meanWorkers = %g threads, %g procs with one alive record's threads unread; want 8 and 4", threads, procs)
	}
}

// The lane series holds one point per thread pass of the incarnation,
// with the load's requests in flight then; passes of another incarnation
// or before the load's first progress second are left out.
func TestLaneSeries(t *testing.T) {
	rec := func(hot bool, inc int, rate, p50, cpu, wait float64) *model.Record {
		r := &model.Record{Rate: rate, P50: p50}
		r.Incarnation, r.HotValid, r.HotThreadCPU, r.HotThreadWait = inc, hot, cpu, wait
		return r
	}
	win := []*model.Record{
		rec(true, 1, 0, 0, 0.3, 0),          // before the first progress second
		rec(true, 1, 100, 0.004, 0.3, 0.02), // 0.4 in flight
		rec(false, 1, 100, 0.004, 0, 0),     // no thread pass
		rec(true, 2, 100, 0.004, 0.9, 0),    // a later incarnation
		rec(true, 1, 80, 0.3, 0.4, 0.6),     // 24 in flight, behind a waiting thread
	}
	run, fl := laneSeries(win, 1)
	if len(run) != 2 || len(fl) != 2 || math.Abs(run[0]-0.32) > 1e-9 || math.Abs(run[1]-1) > 1e-9 ||
		math.Abs(fl[0]-0.4) > 1e-9 || math.Abs(fl[1]-24) > 1e-9 {
		t.Fatalf("lane series %v, in flight %v; want [0.32 1] and [0.4 24]", run, fl)
	}
}
