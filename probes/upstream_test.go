package probes

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	"go.uber.org/zap/zaptest"
)

func TestParseHexAddrPort(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"0302010A:1538", "10.1.2.3:5432"},
		{"00000000:0000", "0.0.0.0:0"},
		{"0000000000000000FFFF00000100007F:238C", "127.0.0.1:9100"}, // v4-mapped
		{"00000000000000000000000001000000:0050", "[::1]:80"},
	}
	for _, tt := range tests {
		got, err := parseHexAddrPort([]byte(tt.in))
		if err != nil || got != netip.MustParseAddrPort(tt.want) {
			t.Errorf("parseHexAddrPort(%s) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007:1F90", "0100007G:1F90", "0100007F:XYZ", "0100007F:10000"} {
		if got, err := parseHexAddrPort([]byte(bad)); err == nil {
			t.Errorf("parseHexAddrPort(%q) = %v; want an error", bad, got)
		}
	}
}

// The fixture testdata/upstream/proc: nginx (10, with a worker 11) listens
// on 127.0.0.1:8080 and connects to 127.0.0.1:9000 (twice, from both
// processes) and to 127.0.0.1:9100 over a v4-mapped IPv6 socket, both
// served by python3 (20, with a child 21); to 127.0.0.1:9200, whose
// listening socket no process owns; to 10.1.2.3:5432, another host (a
// local postgres, 40, listens on 0.0.0.0:5432); and to its own 8080. A
// TIME_WAIT row to 9000 has no owner and is no connection.
func TestUpstreamsFromFixture(t *testing.T) {
	tg, err := Open(context.Background(), Spec{PID: 10, ProcRoot: "testdata/upstream/proc", CgroupRoot: fixtureCgroup}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(tg, SamplerOptions{Log: zaptest.NewLogger(t), SmapsInterval: -1, ThreadInterval: -1})
	if got := s.Sample(); got.Procs != 2 {
		t.Fatalf("procs = %d; want 2 (nginx and its worker)", got.Procs)
	}
	ups := s.Upstreams(context.Background())
	py := Upstream{ViaPID: 10, Via: "nginx", PID: 20, Start: 2000, Name: "python3", Cmdline: "python3 --fixture"}
	a, b := py, py
	a.Addr, b.Addr = "127.0.0.1:9000", "127.0.0.1:9100"
	none := Upstream{Addr: "127.0.0.1:9200", ViaPID: 10, Via: "nginx", Why: "no process here owns its listening socket (another network namespace?)"}
	want := []Upstream{a, none, b}
	if !reflect.DeepEqual(ups, want) {
		t.Fatalf("upstreams\n%+v\nwant\n%+v", ups, want)
	}
	if got, w := a.String(), "nginx forwards to 127.0.0.1:9000, served by pid 20 (python3)"; got != w {
		t.Errorf("String() = %q; want %q", got, w)
	}
	if s.Follow(none) || !s.Follow(a) || s.Follow(b) {
		t.Errorf("Follow: want true for the first python3 address only")
	}
	if got := s.Sample(); got.Procs != 4 {
		t.Errorf("procs = %d after following python3; want 4 (its child too)", got.Procs)
	}
	if ups := s.Upstreams(context.Background()); len(ups) != 1 || ups[0].Addr != "127.0.0.1:9200" {
		t.Errorf("upstreams after following python3: %+v; want 127.0.0.1:9200 alone", ups)
	}
}

// TestUpstreamLookSkipsTheTreesOwnListeners: once a look has read the
// sampled processes' fds, a connection to a listener they own (the load's
// connections to the target) is no reason to read them again, and a
// connection to another local server is.
func TestUpstreamLookSkipsTheTreesOwnListeners(t *testing.T) {
	tg, err := Open(context.Background(), Spec{PID: 10, ProcRoot: "testdata/upstream/proc", CgroupRoot: fixtureCgroup}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(tg, SamplerOptions{Log: zaptest.NewLogger(t), SmapsInterval: -1, ThreadInterval: -1})
	s.Sample()
	listen, conns := s.readConns(10)
	var own, other tcpConn
	for _, c := range conns {
		switch c.Remote.Port() {
		case 8080:
			own = c
		case 9000:
			other = c
		}
	}
	if own.Remote.Port() == 0 || other.Remote.Port() == 0 {
		t.Fatalf("the fixture's connections to 8080 and 9000 are not read: %+v", conns)
	}
	if !s.upstreamCandidate(listen, own) {
		t.Errorf("before the first look, a connection to the tree's own listener is a candidate")
	}
	s.Upstreams(context.Background())
	if s.upstreamCandidate(listen, own) {
		t.Errorf("after a look, a connection to the tree's own listener (8080) is still a candidate: a look would read every fd for the load's connections")
	}
	if !s.upstreamCandidate(listen, other) {
		t.Errorf("a connection to python3's 9000 is no candidate")
	}
}
