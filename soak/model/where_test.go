package model

import (
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

func TestMappingsLine(t *testing.T) {
	ms := []verdict.Mapping{
		{Name: "[heap]", GrowthBytes: 88 << 20, Share: 0.917},
		{Name: "anonymous", GrowthBytes: 8 << 20, Share: 0.083, New: &verdict.NewMappings{Count: 3, Arenas: 3,
			Sizes: []verdict.SizeCount{{SizeBytes: 8 << 20, Count: 3}}}},
	}
	want := "92 % in [heap] (+88 MiB), 8 % in anonymous mappings (+8 MiB, new: 3 × 8 MiB, glibc arenas)"
	if got := MappingsLine(ms); got != want {
		t.Errorf("MappingsLine = %q; want %q", got, want)
	}
}

func TestTopFindingAndTextSayWhere(t *testing.T) {
	rep := &Report{Verdict: verdict.Leak, Resources: map[string]verdict.Resource{"rss": {
		Verdict: verdict.Leak, Unit: "bytes", PerRequest: 1000,
		Mappings: []verdict.Mapping{{Name: "anonymous", GrowthBytes: 30 << 20, Share: 1}},
		Sites:    []verdict.Site{{Site: "main.leak (main.go:42)", Kind: "go-heap", PerRequest: 1024, ObjectsPerRequest: 1, Share: 0.97}},
	}}, Where: &Where{Notes: []string{"found a Go heap profile"}, Evidence: []EvidenceFile{{Name: "heap-start.pb.gz", Bytes: 10}}}}
	if got, want := rep.TopFinding(), "rss grows at main.leak (main.go:42): 1 KiB/request, 1 objects/request (97 %)"; got != want {
		t.Errorf("TopFinding = %q; want %q", got, want)
	}
	var b strings.Builder
	rep.WriteText(&b)
	for _, want := range []string{
		"  rss grows in: 100 % in anonymous mappings (+30 MiB)\n",
		"  rss grows at: main.leak (main.go:42): 1 KiB/request",
		"  where: found a Go heap profile\n",
		"  evidence kept: heap-start.pb.gz\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestGrowing(t *testing.T) {
	for _, tc := range []struct {
		r    verdict.Resource
		want bool
	}{
		{verdict.Resource{Verdict: verdict.Leak}, true},
		{verdict.Resource{Verdict: verdict.Inconclusive, PerRequest: 3}, true},
		{verdict.Resource{Verdict: verdict.Inconclusive, PerRequest: -3}, false},
		{verdict.Resource{Verdict: verdict.Stable, PerRequest: 3}, false},
	} {
		if got := Growing(tc.r); got != tc.want {
			t.Errorf("Growing(%s, %g) = %v; want %v", tc.r.Verdict, tc.r.PerRequest, got, tc.want)
		}
	}
}
