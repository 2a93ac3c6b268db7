package runner

import (
	"reflect"
	"testing"

	"github.com/soakd/soakd/probes"
)

// TestCarryNet: at the load's end (closing) a member carries its previous
// net reading, as the tree's fds_net_of_load does; before it, and for a
// member without the count or first seen then, the count stands.
func TestCarryNet(t *testing.T) {
	w := func(pid int32, fds, conns uint64) probes.Member {
		return probes.Member{PID: pid, Start: uint64(pid), FDs: fds, LoadConns: conns, LoadConnsValid: true}
	}
	prev := carryNet([]probes.Member{w(1, 30, 19), w(2, 12, 1)}, nil, false)
	if want := map[memberID]uint64{{1, 1}: 11, {2, 2}: 11}; !reflect.DeepEqual(prev, want) {
		t.Fatalf("net readings %v; want %v", prev, want)
	}
	// Closing: soakd's ends of 27 more connections of member 1 came and
	// went between the samples, unseen; member 3 is new; member 2 has no
	// count this time.
	ms := []probes.Member{w(1, 70, 32), {PID: 2, Start: 2, FDs: 40}, w(3, 20, 5)}
	next := carryNet(ms, prev, true)
	if ms[0].LoadConns != 59 || ms[1].LoadConns != 0 || ms[2].LoadConns != 5 {
		t.Errorf("load_conns while closing %d, %d, %d; want 59 (70 less the previous net 11), 0 (not counted), 5 (first seen)",
			ms[0].LoadConns, ms[1].LoadConns, ms[2].LoadConns)
	}
	if want := map[memberID]uint64{{1, 1}: 11, {3, 3}: 15}; !reflect.DeepEqual(next, want) {
		t.Errorf("net readings %v; want %v", next, want)
	}
	ms = []probes.Member{w(1, 70, 32)}
	if carryNet(ms, prev, false); ms[0].LoadConns != 32 {
		t.Errorf("load_conns before the load's end %d; want 32, as counted", ms[0].LoadConns)
	}
}
