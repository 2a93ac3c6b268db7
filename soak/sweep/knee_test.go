package sweep

import (
	"fmt"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// lv is a synthetic level: concurrency, throughput and a CPU verdict.
func lv(n int, x float64, bound string, u float64) Level {
	return Level{Concurrency: n, Throughput: x, Requests: uint64(10 * x), P50: float64(n) / x,
		CPU:      verdict.CPU{Bound: bound, Utilization: u, Capacity: 2, HostCPUs: 2, HostUtilization: u + 0.2, Reason: bound + ": synthetic"},
		CPUBound: bound == verdict.BoundCPU, FDLimit: 65536, FDs: 10 + n, Accepted: float64(n), Established: float64(n), RSS: uint64(1<<20 + n*48<<10)}
}

// TestExplain names each cause from synthetic ladders.
func TestExplain(t *testing.T) {
	io, cpu := verdict.BoundIO, verdict.BoundCPU
	cases := []struct {
		name   string
		levels []Level
		cause  string
		knee   int
	}{
		{"linear, idle: per connection", []Level{lv(1, 50, io, 0.01), lv(2, 100, io, 0.02), lv(5, 250, io, 0.05), lv(10, 490, io, 0.1)}, CausePerConnection, 0},
		{"flat past one core: cpu", []Level{lv(1, 400, cpu, 0.8), lv(2, 480, cpu, 1), lv(4, 490, cpu, 1)}, CauseCPU, 1},
		{"soakd saturated: client", []Level{lv(1, 400, io, 0.2), lv(2, 800, io, 0.4), lv(4, 850, verdict.BoundClient, 0.4)}, CauseClient, 2},
		{"peak then fall, not saturated: coherency", []Level{lv(1, 100, io, 0.1), lv(2, 190, io, 0.1), lv(5, 400, io, 0.1), lv(10, 500, io, 0.1), lv(20, 420, io, 0.1), lv(50, 250, io, 0.1)}, CauseCoherency, 5},
		{"plateau, not saturated: contention", []Level{lv(1, 100, io, 0.1), lv(2, 160, io, 0.1), lv(5, 240, io, 0.1), lv(10, 270, io, 0.1), lv(20, 280, io, 0.1)}, CauseContention, 2},
		{"scaled to the top, CPU-bound there: cpu", []Level{lv(1, 200, cpu, 0.4), lv(2, 380, cpu, 0.8)}, CauseCPU, 2},
		{"linear and busy: none", []Level{lv(1, 100, io, 0.6), lv(2, 200, io, 1.2), lv(4, 400, io, 1.6)}, CauseNone, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, x := make([]float64, len(c.levels)), make([]float64, len(c.levels))
			for i, l := range c.levels {
				n[i], x[i] = float64(l.Concurrency), l.Throughput
			}
			k := explain(c.levels, FitUSL(n, x), perConnection(c.levels))
			if k.Cause != c.cause || k.Concurrency != c.knee || k.Reason == "" {
				t.Errorf("explain = %s at %d (%s); want %s at %d", k.Cause, k.Concurrency, k.Reason, c.cause, c.knee)
			}
		})
	}
}

// TestExplainWalls: the fd wall and the accept queue come first, whatever
// the throughput did.
func TestExplainWalls(t *testing.T) {
	ls := []Level{lv(100, 500, verdict.BoundIO, 0.1), lv(400, 2000, verdict.BoundIO, 0.1), lv(1100, 4000, verdict.BoundCPU, 0.1)}
	ls[2].FDs, ls[2].Established, ls[2].Accepted = 1023, 1100, 1010
	pc := perConnection(ls)
	k := explain(ls, USL{}, pc)
	if k.Cause != CauseFDLimit || k.Concurrency != 400 || !strings.Contains(k.Reason, "1023") || pc.FDLimit != 1024 {
		t.Errorf("explain = %+v, per connection %+v; want fd_limit at 400, the fds at 1023, the limit 1024", k, pc)
	}
	ls = []Level{lv(1, 500, verdict.BoundIO, 0.1), lv(8, 600, verdict.BoundCPU, 0.5)}
	ls[1].ListenOverflows, ls[1].AcceptQueueMax, ls[1].AcceptQueueLimit, ls[1].SynModes = 30, 2, 1, []float64{1}
	if k := explain(ls, USL{}, PerConnection{}); k.Cause != CauseListenQueue || k.Concurrency != 1 || !strings.Contains(k.Reason, "[1] s") {
		t.Errorf("explain = %+v; want listen_queue at 1 with the 1 s mode", k)
	}
	ls[1].AcceptQueueMax, ls[1].SynModes = 0, nil // another server's overflows
	if k := explain(ls, USL{}, PerConnection{}); k.Cause == CauseListenQueue {
		t.Errorf("explain = %+v; want no listen_queue from overflows the URL's listener did not show", k)
	}
}

// TestPerConnection fits 48 KiB and one fd per connection and projects
// the ceiling.
func TestPerConnection(t *testing.T) {
	ls := []Level{lv(10, 1, verdict.BoundIO, 0), lv(50, 1, verdict.BoundIO, 0), lv(100, 1, verdict.BoundIO, 0), lv(200, 1, verdict.BoundIO, 0)}
	for i := range ls {
		ls[i].FDLimit = 1024
	}
	pc := perConnection(ls)
	if pc.RSSBytes != 48<<10 || pc.FDs != 1 || pc.CeilingConnections != 1014 {
		t.Errorf("perConnection = %+v; want 48 KiB, 1 fd, the limit 1024 reached at 1014 connections", pc)
	}
	if !strings.Contains(pc.Text, "48 KiB") || !strings.Contains(pc.Text, "about 1014 connections") {
		t.Errorf("text = %q", pc.Text)
	}
}

// TestStopReason stops past a confirmed knee once throughput fell, on
// errors, at the fd wall; one noisy level past the knee does not stop it,
// nor does anything past the knee with pastKnee.
func TestStopReason(t *testing.T) {
	io := verdict.BoundIO
	fell := []Level{lv(1, 100, io, 0), lv(2, 110, io, 0), lv(4, 80, io, 0)}
	if s := stopReason(fell, 0.01, false); !strings.Contains(s, "past the knee at 1 clients (") || !strings.Contains(s, "fell") {
		t.Errorf("stopReason(fell) = %q; want a stop past the knee at 1 client", s)
	}
	if s := stopReason(fell, 0.01, true); s != "" {
		t.Errorf("stopReason(fell, pastKnee) = %q; want none", s)
	}
	for _, ls := range [][]Level{
		{lv(1, 100, io, 0), lv(2, 200, io, 0), lv(5, 150, io, 0)}, // one noisy level: unconfirmed
		{lv(1, 100, io, 0), lv(2, 200, io, 0)},                    // scaling
	} {
		if s := stopReason(ls, 0.01, false); s != "" {
			t.Errorf("stopReason(%v) = %q; want none", ls, s)
		}
	}
	l := lv(1, 100, io, 0)
	l.Errors = 50
	if s := stopReason([]Level{l}, 0.01, true); !strings.Contains(s, "failed") {
		t.Errorf("stopReason(errors) = %q", s)
	}
}

// TestOneKnee: the stop rule's knee is the report's, and a noisy dip
// followed by a level that scaled again is no knee.
func TestOneKnee(t *testing.T) {
	io := verdict.BoundIO
	dip := []Level{lv(1, 100, io, 0.1), lv(2, 200, io, 0.1), lv(5, 300, io, 0.1), lv(10, 1000, io, 0.1), lv(20, 1900, io, 0.1)}
	if k := kneeIndex(dip); k != -1 {
		t.Errorf("kneeIndex(dip at 5) = %d; want -1 (the next level scaled from 2 again)", k)
	}
	ls := []Level{lv(1, 100, io, 0.1), lv(2, 190, io, 0.1), lv(5, 400, io, 0.1), lv(10, 500, io, 0.1), lv(20, 420, io, 0.1), lv(50, 250, io, 0.1)}
	_, _, k := fit(ls)
	s := stopReason(ls, 0.01, false)
	if !k.Confirmed || !strings.Contains(s, fmt.Sprintf("past the knee at %d clients (%s)", k.Concurrency, k.Cause)) {
		t.Errorf("knee %+v, stop %q; want the stop to name the report's knee", k, s)
	}
}

// serialLevel is a level of a server that serves one request of 5 ms at a
// time: 1/5 ms req/s whatever the clients, a p50 of n × 5 ms, its one
// thread on a CPU 1 % of the time.
func serialLevel(n int) Level {
	l := lv(n, 196, verdict.BoundIO, 0.01)
	l.P50, l.Threads = float64(n)*0.0051, 1
	l.CPU.HotThread = &verdict.HotThread{TID: 7, Name: "sweepzoo", CPU: 0.01, Wait: 0.001}
	return l
}

// TestExplainSerial: a serial server's knee is at 1 client, serial, even
// on a full machine and with its accept queue overflowing at 10 clients;
// a CPU-bound thread, a thread short of a core or throughput that does
// not follow 1/S is not serial.
func TestExplainSerial(t *testing.T) {
	ls := []Level{serialLevel(1), serialLevel(2), serialLevel(5), serialLevel(10)}
	ls[1].CPU.HostUtilization = 2 // the machine: all cores busy with other work
	ls[3].ListenOverflows, ls[3].AcceptQueueMax, ls[3].AcceptQueueLimit = 40, 3, 2
	_, _, k := fit(ls)
	if k.Cause != CauseSerial || k.Concurrency != 1 || !k.Confirmed || !strings.Contains(k.Reason, "one request at a time") || !strings.Contains(k.Reason, "accept queue") {
		t.Errorf("knee = %+v; want serial at 1 client, confirmed, the overflow at 10 noted", k)
	}
	s := suggest(ls, k, runner.Options{Load: load.Options{Endpoints: []load.Endpoint{{URL: "http://127.0.0.1:1/"}}}})
	if s.Concurrency != 1 || s.Rate <= 0 || s.Rate > ls[0].Throughput {
		t.Errorf("suggestion = %+v; want 1 client at a rate under %.0f req/s", s, ls[0].Throughput)
	}
	// One client leaves the server idle over soakd's turnaround on a busy
	// machine (measured: 78 req/s, p50 8.78 ms; 181 req/s at 2 clients):
	// the throughput's knee is at 2, the serial knee at 1 all the same.
	busy := []Level{serialLevel(1), serialLevel(2), serialLevel(4), serialLevel(8)}
	busy[0].Throughput, busy[0].P50 = 78, 0.00878
	busy[1].Throughput, busy[1].P50 = 181, 0.0103
	busy[2].Throughput, busy[2].P50 = 165, 0.0213
	busy[3].Throughput, busy[3].P50 = 170, 0.045
	if _, _, k := fit(busy); k.Cause != CauseSerial || k.Concurrency != 1 || !k.Confirmed {
		t.Errorf("busy machine: knee = %+v; want serial at 1 client, confirmed", k)
	}
	for name, change := range map[string]func(l *Level){
		"cpu-bound thread":   func(l *Level) { l.CPU.HotThread.CPU = 0.9 },
		"short of a core":    func(l *Level) { l.CPU.HotThread.Wait = 0.6 },
		"throughput not 1/S": func(l *Level) { l.Throughput = 100 },
		"p50 not n·S":        func(l *Level) { l.P50 = 0.005 },
	} {
		ls := []Level{serialLevel(1), serialLevel(2), serialLevel(5)}
		change(&ls[1])
		if _, _, k := fit(ls); k.Cause == CauseSerial {
			t.Errorf("%s: knee = %+v; want another cause", name, k)
		}
	}
}

// TestSuggestAtKnee: the soak is at the knee's level, under its
// throughput, not one level below (nor at one client).
func TestSuggestAtKnee(t *testing.T) {
	cpu := verdict.BoundCPU
	ls := []Level{lv(1, 1900, cpu, 0.3), lv(2, 3800, cpu, 0.5), lv(5, 9000, cpu, 0.8), lv(10, 14000, cpu, 1.0), lv(20, 14082, cpu, 1.0), lv(50, 14000, cpu, 1.0)}
	_, _, k := fit(ls)
	s := suggest(ls, k, runner.Options{Load: load.Options{Endpoints: []load.Endpoint{{URL: "http://127.0.0.1:1/"}}}})
	if k.Concurrency != 10 || s.Concurrency != 10 || s.Rate > 14000 || !strings.HasPrefix(s.Command, "soakd run -c 10 --rate 11000 ") {
		t.Errorf("knee %+v, suggestion %+v; want the knee at 10 clients and a soak of 10 clients at 11000 req/s (80 %% of 14000)", k, s)
	}
}

// TestCompare words the change between two sweeps.
func TestCompare(t *testing.T) {
	io := verdict.BoundIO
	prev := &Report{Knee: Knee{Concurrency: 10, Cause: CauseCPU}, Levels: []Level{lv(1, 100, io, 0), lv(10, 900, io, 0)}}
	cur := &Report{Knee: Knee{Concurrency: 5, Cause: CauseCPU}, Levels: []Level{lv(1, 100, io, 0), lv(10, 450, io, 0)}}
	got := Compare(prev, cur)
	for _, want := range []string{"moved from 10 clients (cpu) to 5 clients (cpu)", "-50 % at 10 clients"} {
		if !strings.Contains(got, want) {
			t.Errorf("Compare = %q; want %q in it", got, want)
		}
	}
}

// TestStarvedTopIsNotTheTargetsLimit: a ladder that scaled at every
// step, at whose top the target waited for a core a third of each
// request, says the machine held it back, not a per-connection throttle
// and not no more than "no knee".
func TestStarvedTopIsNotTheTargetsLimit(t *testing.T) {
	io := verdict.BoundIO
	ls := []Level{lv(1, 100, io, 0.05), lv(2, 200, io, 0.05), lv(5, 500, io, 0.1)}
	top := &ls[len(ls)-1]
	top.CPU.ResponseSeconds, top.CPU.RunqueueWaitSeconds = 0.010, 0.0035
	_, _, k := fit(ls)
	if k.Cause == CausePerConnection || !strings.Contains(k.Reason, "short of CPU at 5 clients") {
		t.Errorf("knee %+v; want no knee, the target short of CPU at 5 clients", k)
	}
	top.CPU.RunqueueWaitSeconds = 0
	if _, _, k := fit(ls); strings.Contains(k.Reason, "short of CPU") {
		t.Errorf("without the wait: %q still says short of CPU", k.Reason)
	}
}
