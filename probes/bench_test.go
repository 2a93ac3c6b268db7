package probes

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
)

// cpuTime is this process's user+system CPU so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSample samples srv's tree b.N times and reports CPU µs per sample
// (soakd's own CPU, which is what the budget is about).
func benchSample(b *testing.B, srv *server, wantProcs int, opts SamplerOptions) {
	tg := openLive(b, Spec{PID: srv.pid})
	opts.Log = zap.NewNop()
	s := NewSampler(tg, opts)
	waitFor(b, fmt.Sprintf("%d processes", wantProcs), func() bool { return s.Sample().Procs == wantProcs })
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for range b.N {
		if got := s.Sample(); got.Procs != wantProcs {
			b.Fatalf("procs = %d; want %d", got.Procs, wantProcs)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkSampleSingle is one sample of a one-process target.
func BenchmarkSampleSingle(b *testing.B) {
	benchSample(b, startServer(b, "127.0.0.1:0"), 1, SamplerOptions{})
}

// BenchmarkSampleTree50 is one sample of a 50-process tree.
func BenchmarkSampleTree50(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchSample(b, srv, 50, SamplerOptions{})
}

// BenchmarkSampleSingleFDs1000 is a one-process target holding 1000 more
// fds: the cost of the readlink per fd needed to find socket inodes.
func BenchmarkSampleSingleFDs1000(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fds?n=1000")
	benchSample(b, srv, 1, SamplerOptions{})
}

// BenchmarkSampleSingleCensus takes the TCP census on every sample, to
// show its cost (a readlink per fd and a sock_diag dump).
func BenchmarkSampleSingleCensus(b *testing.B) {
	benchSample(b, startServer(b, "127.0.0.1:0"), 1, SamplerOptions{SocketInterval: time.Nanosecond})
}

// BenchmarkSampleTree50Census is the 50-process tree with a census on
// every sample.
func BenchmarkSampleTree50Census(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchSample(b, srv, 50, SamplerOptions{SocketInterval: time.Nanosecond})
}

// BenchmarkSampleSingleSmaps reads smaps_rollup on every sample, to show
// what the SmapsInterval cadence saves.
func BenchmarkSampleSingleSmaps(b *testing.B) {
	benchSample(b, startServer(b, "127.0.0.1:0"), 1, SamplerOptions{SmapsInterval: time.Nanosecond})
}

// BenchmarkWalkFull is a walk with the foreign-PID cache emptied: what
// every sample would cost without it (one stat read per process on the
// host).
func BenchmarkWalkFull(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	fs := newProcFS("/proc")
	st, err := parseStat([]byte(mustRead(b, fmt.Sprintf("/proc/%d/stat", srv.pid))))
	if err != nil {
		b.Fatal(err)
	}
	w := newWalker(fs)
	root := procID{PID: int32(srv.pid), Start: st.StartTime}
	var out []proc
	b.ResetTimer()
	for range b.N {
		clear(w.foreign)
		if out, err = w.tree(root, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSampleSingleFDs1000Census is the census with 1000 fds to read
// the links of.
func BenchmarkSampleSingleFDs1000Census(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fds?n=1000")
	benchSample(b, srv, 1, SamplerOptions{SocketInterval: time.Nanosecond})
}

// BenchmarkSampleSingleThreads reads every thread on every sample, to show
// the cost of the thread pass (status and schedstat per thread) that
// ThreadInterval spreads out.
func BenchmarkSampleSingleThreads(b *testing.B) {
	benchSample(b, startServer(b, "127.0.0.1:0"), 1, SamplerOptions{ThreadInterval: time.Nanosecond})
}

// BenchmarkSampleTree50Threads is the 50-process tree with the thread pass
// on every sample.
func BenchmarkSampleTree50Threads(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchSample(b, srv, 50, SamplerOptions{ThreadInterval: time.Nanosecond})
}

// benchPaced samples srv's tree once per interval, as a run paced to
// interval does, with the default cadences of the census, smaps and thread
// passes, and reports soakd's own CPU per sample and as a share of one
// core ("%core": CPU time over wall time, ticker wake-ups included). Run
// with a fixed count, e.g. -benchtime 300x (3 s at 10 ms).
func benchPaced(b *testing.B, srv *server, wantProcs int, interval time.Duration) {
	tg := openLive(b, Spec{PID: srv.pid})
	s := NewSampler(tg, SamplerOptions{Log: zap.NewNop()})
	waitFor(b, fmt.Sprintf("%d processes", wantProcs), func() bool { return s.Sample().Procs == wantProcs })
	tick := time.NewTicker(interval)
	defer tick.Stop()
	b.ResetTimer()
	start, wall := cpuTime(b), time.Now()
	for range b.N {
		<-tick.C
		if got := s.Sample(); got.Procs != wantProcs {
			b.Fatalf("procs = %d; want %d", got.Procs, wantProcs)
		}
	}
	cpu, elapsed := cpuTime(b)-start, time.Since(wall)
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(100*cpu.Seconds()/elapsed.Seconds(), "%core")
}

// BenchmarkPacedSingle10ms samples a one-process target every 10 ms, the
// shortest interval adaptive pacing uses (soak.MinInterval).
func BenchmarkPacedSingle10ms(b *testing.B) {
	benchPaced(b, startServer(b, "127.0.0.1:0"), 1, 10*time.Millisecond)
}

// BenchmarkPacedSingle50ms is the start interval of adaptive pacing.
func BenchmarkPacedSingle50ms(b *testing.B) {
	benchPaced(b, startServer(b, "127.0.0.1:0"), 1, 50*time.Millisecond)
}

// BenchmarkPacedTree50at10ms samples a 50-process tree every 10 ms. The
// pacer would not go this fast for such a tree (it keeps sampling under
// its 2 % budget), which this shows.
func BenchmarkPacedTree50at10ms(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchPaced(b, srv, 50, 10*time.Millisecond)
}

// BenchmarkPacedTree50at100ms samples a 50-process tree every 100 ms.
func BenchmarkPacedTree50at100ms(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchPaced(b, srv, 50, 100*time.Millisecond)
}

// benchUpstreams looks for upstreams in srv's tree b.N times, after a
// first look, and reports CPU µs per look.
func benchUpstreams(b *testing.B, srv *server, wantProcs int) {
	tg := openLive(b, Spec{PID: srv.pid})
	s := NewSampler(tg, SamplerOptions{Log: zap.NewNop()})
	waitFor(b, fmt.Sprintf("%d processes", wantProcs), func() bool { return s.Sample().Procs == wantProcs })
	s.Upstreams(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for range b.N {
		s.Upstreams(context.Background())
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkUpstreamsNothingToFind is a look at a 50-process tree that
// forwards nowhere: one sock_diag dump, no readlink.
func BenchmarkUpstreamsNothingToFind(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchUpstreams(b, srv, 50)
}

// BenchmarkSampleTree50LoadConns counts each process's connections to
// soakd on every sample (SamplerOptions.LoadConns): a readlink per fd and
// a sock_diag dump. Compare BenchmarkSampleTree50.
func BenchmarkSampleTree50LoadConns(b *testing.B) {
	srv := startServer(b, "127.0.0.1:0")
	srv.post(b, "/ctl/fork?n=49")
	benchSample(b, srv, 50, SamplerOptions{LoadConns: true})
}

// BenchmarkSampleSingleConns64 is a one-process target holding 64
// connections from soakd (the test), as a prefork worker holds a busy
// open loop's; BenchmarkSampleSingleConns64LoadConns counts them.
func BenchmarkSampleSingleConns64(b *testing.B) {
	benchSample(b, serverWithConns(b, 64), 1, SamplerOptions{})
}

func BenchmarkSampleSingleConns64LoadConns(b *testing.B) {
	benchSample(b, serverWithConns(b, 64), 1, SamplerOptions{LoadConns: true})
}

// serverWithConns starts the helper target and opens n connections to it,
// closed at the end.
func serverWithConns(b *testing.B, n int) *server {
	srv := startServer(b, "127.0.0.1:0")
	for range n {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
	}
	return srv
}
