package probes

import (
	"testing"
	"time"

	"go.uber.org/zap"
)

// BenchmarkMapsTree50 reads the whole /proc/PID/smaps of a 50-process
// tree, grouped (what the soak's start and end, and each paced read with
// SamplerOptions.Mappings, cost), and reports soakd's CPU per read.
func BenchmarkMapsTree50(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	s := NewSampler(openLive(b, Spec{PID: srv.pid}), SamplerOptions{Log: zap.NewNop()})
	waitFor(b, "50 processes", func() bool { return s.Sample().Procs == 50 })
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for range b.N {
		if snap, ok := s.MapsNow(); !ok || snap.Procs != 50 {
			b.Fatalf("MapsNow: ok %v, procs %d; want 50", ok, snap.Procs)
		}
		s.TakeMaps()
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkSampleTree50Smaps and BenchmarkSampleTree50Maps read smaps on
// every sample of a 50-process tree: smaps_rollup alone, then the full
// smaps grouped by mapping class.
func BenchmarkSampleTree50Smaps(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchSample(b, srv, 50, SamplerOptions{SmapsInterval: time.Nanosecond})
}

func BenchmarkSampleTree50Maps(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchSample(b, srv, 50, SamplerOptions{SmapsInterval: time.Nanosecond, Mappings: true})
}
