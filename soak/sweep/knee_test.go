package sweep

import (
	"strings"
	"testing"

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

// TestStopReason stops past the knee once throughput fell, on errors, at
// the fd wall.
func TestStopReason(t *testing.T) {
	io := verdict.BoundIO
	if s := stopReason([]Level{lv(1, 100, io, 0), lv(2, 110, io, 0), lv(4, 80, io, 0)}, 0.01); !strings.Contains(s, "fell") {
		t.Errorf("stopReason(fell) = %q", s)
	}
	l := lv(1, 100, io, 0)
	l.Errors = 50
	if s := stopReason([]Level{l}, 0.01); !strings.Contains(s, "failed") {
		t.Errorf("stopReason(errors) = %q", s)
	}
	if s := stopReason([]Level{lv(1, 100, io, 0), lv(2, 200, io, 0)}, 0.01); s != "" {
		t.Errorf("stopReason(scaling) = %q; want none", s)
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
