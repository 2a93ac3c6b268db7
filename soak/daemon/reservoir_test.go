package daemon

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// sawRecord is sample i of a run whose RSS saws over a 10-sample cycle
// on a slow rise, with one process.
func sawRecord(i int) model.Record {
	rss := uint64(100<<20 + i*64 + (i%10)*4096)
	return model.Record{
		Sample: probes.Sample{
			Time: time.Unix(1_700_000_000, 0).Add(time.Duration(i) * 10 * time.Millisecond), Alive: true, Incarnation: 1,
			RSSValid: true, RSS: rss, Members: []probes.Member{{PID: 42, Start: 7, RSS: rss}},
		},
		Elapsed: float64(i) / 100, Phase: verdict.Soak, Requests: uint64(i) * 3,
	}
}

// TestReservoirBounded: however many records go in, the reservoir holds
// at most its size plus the stride being filled and the newest, in time
// order from the run's start to its newest record, and counts them all.
// An unbounded in-memory series fails here.
func TestReservoirBounded(t *testing.T) {
	const size = 64
	s := newReservoir(size)
	for i := range 100_000 {
		s.add(sawRecord(i))
		if h := s.held(); h > size+2 {
			t.Fatalf("after %d records the reservoir holds %d; want at most %d", i+1, h, size+2)
		}
		if c := cap(s.kept); c > size {
			t.Fatalf("after %d records the reservoir's array holds %d; want at most %d", i+1, c, size)
		}
	}
	snap := s.snapshot()
	if len(snap) > size+2 || len(snap) < size/2 {
		t.Fatalf("snapshot of %d records; want %d to %d", len(snap), size/2, size+2)
	}
	if s.n != 100_000 || s.soakN != 100_000 {
		t.Errorf("counted %d records, %d in the soak; want 100000 each", s.n, s.soakN)
	}
	for i := 1; i < len(snap); i++ {
		if snap[i].Elapsed <= snap[i-1].Elapsed {
			t.Fatalf("snapshot out of time order at %d: %g after %g", i, snap[i].Elapsed, snap[i-1].Elapsed)
		}
	}
	if first := snap[0].Elapsed; first >= float64(s.stride)/100 {
		t.Errorf("snapshot starts at %g s; want the first stride (%d samples, %g s)", first, s.stride, float64(s.stride)/100)
	}
	if last := snap[len(snap)-1]; last.Requests != 99_999*3 {
		t.Errorf("snapshot ends at %d requests; want the newest record's %d", last.Requests, 99_999*3)
	}
}

// TestReservoirKeepsTroughs: of each stride the reservoir keeps the
// lowest RSS, so every kept record is a trough of the saw (i%10 == 0) once
// the stride spans a cycle.
func TestReservoirKeepsTroughs(t *testing.T) {
	s := newReservoir(32)
	for i := range 10_000 {
		s.add(sawRecord(i))
	}
	if s.stride < 10 {
		t.Fatalf("stride %d; want at least a cycle (10)", s.stride)
	}
	for _, r := range s.kept {
		if i := int(r.Elapsed*100 + 0.5); i%10 != 0 {
			t.Errorf("kept sample %d (RSS %d), not a trough of its cycle", i, r.RSS)
		}
	}
}

// TestReservoirShortRunWhole: a run shorter than the reservoir is kept
// whole, so the live analysis of a short run is the final one's; and a
// snapshot does not change when more records come.
func TestReservoirShortRunWhole(t *testing.T) {
	s := newReservoir(DefaultReservoir)
	var all []model.Record
	for i := range 500 {
		all = append(all, sawRecord(i))
		s.add(all[i])
	}
	snap := s.snapshot()
	if len(snap) != len(all) {
		t.Fatalf("snapshot holds %d of %d records", len(snap), len(all))
	}
	for i := range all {
		if snap[i].Elapsed != all[i].Elapsed || snap[i].RSS != all[i].RSS {
			t.Fatalf("record %d: snapshot has %g s %d B; want %g s %d B", i, snap[i].Elapsed, snap[i].RSS, all[i].Elapsed, all[i].RSS)
		}
	}
	ao := analysis.Options{Concurrency: 1}
	got := analysis.NewReport(snap, nil, model.TargetInfo{Probed: true}, ao)
	want := analysis.NewReport(all, nil, model.TargetInfo{Probed: true}, ao)
	if got.Verdict != want.Verdict || got.Resources["rss"].PerRequest != want.Resources["rss"].PerRequest {
		t.Errorf("live verdict %s (%g B/req); want the full series' %s (%g B/req)", got.Verdict,
			got.Resources["rss"].PerRequest, want.Verdict, want.Resources["rss"].PerRequest)
	}
	for i := range 5000 {
		s.add(sawRecord(500 + i))
	}
	for i := range all {
		if snap[i].Elapsed != all[i].Elapsed {
			t.Fatalf("snapshot changed at %d after more records", i)
		}
	}
}

// TestLivePageDrawsReservoir: a running run's report carries the live
// reservoir as it is at the view (at most its size plus two records, up to
// the newest), whatever the number of samples in the store; the page
// draws it until the first live analysis (TestLiveChartsFollowTheAnalysis).
func TestLivePageDrawsReservoir(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := &Daemon{st: st, log: zap.NewNop(), active: map[string]*activeRun{}}
	const size = 64
	for _, n := range []int{50, 1000} {
		id, err := st.CreateRun("chart", store.TriggerAPI, "chart", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ar := &activeRun{id: id, job: "chart", log: zap.NewNop(), res: *newReservoir(size)}
		d.active["chart"] = ar
		for i := range n {
			if err := st.AppendSample(id, sawRecord(i)); err != nil {
				t.Fatal(err)
			}
			ar.res.add(sawRecord(i))
		}
		_, rep, live, err := d.runReport(id)
		if err != nil || !live {
			t.Fatalf("%d samples: runReport live %v, err %v; want the live report", n, live, err)
		}
		recs := rep.Records
		if want := min(n, size+2); len(recs) > want || (n < size && len(recs) != n) || len(recs) < min(n, size/2) {
			t.Errorf("%d samples: the page draws %d; want %d at most (all of a short run)", n, len(recs), want)
		}
		if last := recs[len(recs)-1]; last.Requests != uint64(n-1)*3 {
			t.Errorf("%d samples: the charts end at %d requests; want the newest's %d", n, last.Requests, (n-1)*3)
		}
	}
}

// TestLiveChartsFollowTheAnalysis: a running run's page draws the charts
// of its latest live analysis, rendered once per analysis and reused by
// every view until the next one; none before the first.
func TestLiveChartsFollowTheAnalysis(t *testing.T) {
	ar := &activeRun{job: "chart", log: zap.NewNop(), res: *newReservoir(64)}
	for i := range 40 {
		ar.res.add(sawRecord(i))
	}
	if c, err := ar.liveCharts(); c != nil || err != nil {
		t.Fatalf("before any live analysis: charts %v, err %v; want none (the page draws its own)", c, err)
	}
	ar.live = ar.analyze()
	c1, err := ar.liveCharts()
	if err != nil || c1 == nil {
		t.Fatalf("after an analysis: charts %v, err %v; want charts", c1, err)
	}
	for i := 40; i < 60; i++ {
		ar.res.add(sawRecord(i))
	}
	if c2, _ := ar.liveCharts(); c2 != c1 {
		t.Error("a second view before the next analysis rendered the charts again; want them reused")
	}
	ar.live = ar.analyze()
	if c3, _ := ar.liveCharts(); c3 == c1 || c3 == nil {
		t.Error("after the next analysis the charts were not redrawn")
	}
}

// TestEndedRunIsNotActive: between storing a run's outcome and releasing
// its reservation (alerts, metrics), the run is over for the API: its
// report is the stored one and a stop is refused. CI once saw the window:
// the run list said "completed" while /api/v1/runs/{id} still served the
// live analysis, and a second stop was accepted.
func TestEndedRunIsNotActive(t *testing.T) {
	ar := &activeRun{id: 7, job: "web", log: zap.NewNop()}
	d := &Daemon{log: zap.NewNop(), active: map[string]*activeRun{"web": ar}}
	if d.activeByID(7) != ar {
		t.Fatal("a running run is not active")
	}
	ar.ended.Store(true)
	if d.activeByID(7) != nil || d.LiveReport(7) != nil {
		t.Error("a run whose outcome is stored is still served as live")
	}
	if err := d.StopRun(7); !errors.Is(err, ErrNotRunning) {
		t.Errorf("stop of an ended run: %v; want ErrNotRunning", err)
	}
}
