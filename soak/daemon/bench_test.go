package daemon

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// syntheticRecords returns n samples of a target leaking 2 KiB per request
// at 100 req/s, with allocator noise, one per second.
func syntheticRecords(n int) []model.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Unix(1_700_000_000, 0)
	recs := make([]model.Record, n)
	for i := range recs {
		req := uint64(i * 100)
		recs[i] = model.Record{
			Sample: probes.Sample{
				Time: start.Add(time.Duration(i) * time.Second), Alive: true, RootPID: 42, Incarnation: 1, Procs: 1, RSSValid: true, ThreadsValid: true,
				RSS:      uint64(50<<20) + req*2048 + uint64(rng.IntN(4<<20)),
				FDsValid: true, FDs: 20 + uint64(rng.IntN(3)), FDLimit: 1024, Threads: 8,
				CPUUser: float64(i) * 0.02, CPUSystem: float64(i) * 0.01,
			},
			Elapsed: float64(i), Phase: verdict.Soak, Requests: req, Rate: 100, P50: 0.001, P99: 0.004,
		}
		if i < n/10 {
			recs[i].Phase = verdict.Warmup
		}
	}
	return recs
}

// BenchmarkLiveAnalysis measures one live analysis of a full reservoir
// (DefaultReservoir records, whatever the run's length), as the daemon
// does every minute while a run goes: 8.2 MB allocated before the CPU
// input took its window by reference, 4.4 MB after.
func BenchmarkLiveAnalysis(b *testing.B) {
	recs := syntheticRecords(DefaultReservoir)
	b.ReportAllocs()
	ao := analysis.Options{Concurrency: 1}
	b.ResetTimer()
	for b.Loop() {
		rep := analysis.NewReport(recs, nil, model.TargetInfo{Probed: true}, ao)
		if rep.Resources["rss"].Verdict != verdict.Leak {
			b.Fatalf("rss verdict = %s; want leak", rep.Resources["rss"].Verdict)
		}
	}
}

// BenchmarkOnRecord measures the per-sample path on the sampling
// goroutine: the store write (the run's spool), the live reservoir and
// the metrics.
func BenchmarkOnRecord(b *testing.B) {
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := newMetrics(prometheus.NewRegistry(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	sh, err := newStoreHealth(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	d := &Daemon{st: st, m: m, sh: sh, log: zap.NewNop()}
	id, err := st.CreateRun("bench", store.TriggerAPI, "bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ar := &activeRun{id: id, job: "bench", log: zap.NewNop()}
	recs := syntheticRecords(1000)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		sp := storeSpool{d: d, ar: ar}
		if err := sp.Append(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		d.onRecord(ar, recs[i%len(recs)])
		i++
	}
}

// BenchmarkSamplesJSON measures the API's JSON of 100 samples, as
// /api/v1/runs/ID/samples streams them.
func BenchmarkSamplesJSON(b *testing.B) {
	recs := syntheticRecords(100)
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		a := jsonArray{w: bufio.NewWriter(&out)}
		if err := a.write(recs); err != nil {
			b.Fatal(err)
		}
		if err := a.close(); err != nil {
			b.Fatal(err)
		}
		a.w.Flush()
	}
}
