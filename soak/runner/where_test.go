package runner

import (
	"testing"

	"github.com/soakd/soakd/probes"
)

func snapOf(groups map[string]uint64, anon ...probes.AnonMapping) probes.MapSnapshot {
	s := probes.MapSnapshot{Groups: map[string]probes.MapGroup{}, Anon: anon}
	for n, rss := range groups {
		s.Groups[n] = probes.MapGroup{Name: n, RSS: rss}
	}
	return s
}

func TestMappingGrowthSplitsByClass(t *testing.T) {
	a := snapOf(map[string]uint64{"[heap]": 10 << 20, "anonymous": 4 << 20, "/usr/lib/libc.so.6": 1 << 20, "[stack]": 132 << 10},
		probes.AnonMapping{PID: 1, Start: 0x1000, Size: 4 << 20, RSS: 4 << 20})
	b := snapOf(map[string]uint64{"[heap]": 98 << 20, "anonymous": 12 << 20, "/usr/lib/libc.so.6": 1<<20 + 4096, "[stack]": 100 << 10},
		probes.AnonMapping{PID: 1, Start: 0x1000, Size: 4 << 20, RSS: 4 << 20},
		probes.AnonMapping{PID: 1, Start: 0x7f0004000000, Size: 64 << 20, RSS: 4 << 20, Arena: true},
		probes.AnonMapping{PID: 2, Start: 0x7f0008000000, Size: 64 << 20, RSS: 4 << 20, Arena: true})
	got := mappingGrowth(a, b)
	if len(got) != 2 {
		t.Fatalf("mappings = %+v; want [heap] and anonymous (libc's page is under 1 %%, the stack shrank)", got)
	}
	heap, anon := got[0], got[1]
	if heap.Name != "[heap]" || heap.GrowthBytes != 88<<20 || heap.Share < 0.91 || heap.Share > 0.92 {
		t.Errorf("first = %+v; want [heap] +88 MiB, 92 %%", heap)
	}
	if anon.Name != "anonymous" || anon.GrowthBytes != 8<<20 || anon.New == nil {
		t.Fatalf("second = %+v; want anonymous +8 MiB with its new mappings", anon)
	}
	if n := anon.New; n.Count != 2 || n.Arenas != 2 || len(n.Sizes) != 1 || n.Sizes[0].Count != 2 || n.Sizes[0].SizeBytes != 64<<20 {
		t.Errorf("new = %+v; want 2 × 64 MiB, both arenas", n)
	}
}

func TestMappingGrowthOfNothing(t *testing.T) {
	a := snapOf(map[string]uint64{"[heap]": 10 << 20})
	if got := mappingGrowth(a, a); len(got) != 0 {
		t.Errorf("mappings of no growth = %+v; want none", got)
	}
}
