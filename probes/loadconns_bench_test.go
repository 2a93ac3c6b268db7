package probes

import (
	"fmt"
	"net"
	"testing"

	"go.uber.org/zap"
)

// BenchmarkLoadConnsCount is one sample's count of the load's connections
// per process, alone (the fd reads of every member and the sockets'):
// a tree of procs processes (the helper and its forks) holding conns
// connections from soakd (the test) to the root, counted by a dump of
// every socket (dump), or by the load's list of its connections with
// every connection looked up once (listed) or anew at every count, as if
// all were new since the previous sample (listed-new, the most lookups a
// count can take). cpu-µs/op is soakd's CPU per count.
//
//	go test -run XXX -bench LoadConnsCount -benchtime 300x ./probes/
func BenchmarkLoadConnsCount(b *testing.B) {
	for _, procs := range []int{1, 10, 50} {
		for _, conns := range []int{64, 512} {
			srv := startServer(b, "127.0.0.1:0")
			if procs > 1 {
				srv.post(b, fmt.Sprintf("/ctl/fork?n=%d", procs-1))
			}
			lo := &testLoad{listed: true, conns: map[net.Conn]struct{}{}}
			for range conns {
				lo.dial(b, srv.addr)
			}
			for _, way := range []string{"dump", "listed", "listed-new"} {
				b.Run(fmt.Sprintf("procs=%d/conns=%d/%s", procs, conns, way), func(b *testing.B) {
					o := lo.options(b)
					o.Log = zap.NewNop()
					if way == "dump" {
						o.LoadEnds = nil
					}
					s := NewSampler(openLive(b, Spec{PID: srv.pid}), o)
					waitFor(b, fmt.Sprintf("%d processes", procs), func() bool { return s.Sample().Procs == procs })
					s.peers.on = true // a one-process tree is counted here too
					root := s.Sample().RootPID
					waitFor(b, fmt.Sprintf("%d connections accepted", conns), func() bool { return countOnce(b, s, root) >= uint64(conns) })
					benchCount(b, s, root, conns, way == "listed-new")
				})
			}
		}
	}
}

// benchCount runs the count of the load's connections of s's last
// sample's processes b.N times; anew forgets every connection's server
// end before each.
func benchCount(b *testing.B, s *Sampler, root int32, conns int, anew bool) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for range b.N {
		if anew {
			clear(s.peers.inode)
		}
		if n := countOnce(b, s, root); n < uint64(conns) {
			b.Fatalf("load_conns %d; want at least %d", n, conns)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// countOnce counts the load's connections of s's last sample's processes
// as a sample does, and returns their sum.
func countOnce(b *testing.B, s *Sampler, root int32) (n uint64) {
	procs := s.procs
	s.mems = s.mems[:0]
	for i, p := range procs {
		s.mems = append(s.mems, Member{PID: p.ID.PID})
		if _, err := s.scanFDs(p.ID.PID, i, false); err != nil {
			b.Fatal(err)
		}
	}
	s.countLoadConns(root)
	for _, m := range s.mems {
		n += m.LoadConns
	}
	return n
}
