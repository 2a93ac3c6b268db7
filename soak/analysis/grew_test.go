package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// grewRecords is a soak of 200 samples, 100 requests apart, of a tree
// whose members' RSS is base + perReq·requests + noise (seeded): the
// truth is perReq × 19 900 requests.
func grewRecords(seed uint64, perReq map[string]float64) []model.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	names := []string{"sh", "nginx", "python3"}
	var recs []model.Record
	for i := range 200 {
		req := uint64(100 * i)
		r := model.Record{Sample: probes.Sample{Alive: true, RSSValid: true, RootPID: 10}, Requests: req, Phase: verdict.Soak}
		for j, n := range names {
			rss := 20e6 + perReq[n]*float64(req) + rng.NormFloat64()*50e3
			r.Members = append(r.Members, probes.Member{PID: int32(10 + j), Start: uint64(1000 + j), Name: n, RSS: uint64(rss)})
			r.RSS += uint64(rss)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestGrewNamesTheProcessThatCarriesTheGrowth(t *testing.T) {
	growing := verdict.Resource{Verdict: verdict.Leak, PerRequest: 2048}
	const span = 19_900
	tests := []struct {
		name   string
		perReq map[string]float64
		rss    verdict.Resource
		want   string  // "" = none named
		growth float64 // the named one's truth
		tree   float64
	}{
		{"the child, not the shell root", map[string]float64{"python3": 2048}, growing, "python3", 2048 * span, 2048 * span},
		{"most of it", map[string]float64{"python3": 1500, "nginx": 500}, growing, "python3", 1500 * span, 2000 * span},
		{"spread: none carries half", map[string]float64{"python3": 700, "nginx": 700, "sh": 600}, growing, "", 0, 0},
		{"not growing", map[string]float64{"python3": 2048}, verdict.Resource{Verdict: verdict.Stable}, "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				g := grew(grewRecords(seed, tc.perReq), tc.rss)
				if tc.want == "" {
					if len(g) != 0 {
						t.Errorf("seed %d: grew %+v; want none named", seed, g)
					}
					continue
				}
				if len(g) != 1 || g[0].Name != tc.want || g[0].PID != 12 || g[0].Root {
					t.Fatalf("seed %d: grew %+v; want %s (pid 12), not the root", seed, g, tc.want)
				}
				if e := math.Abs(g[0].Growth/tc.growth - 1); e > 0.01 {
					t.Errorf("seed %d: growth %.4g; want %.4g ± 2 %%", seed, g[0].Growth, tc.growth)
				}
				if e := math.Abs(g[0].TreeGrowth/tc.tree - 1); e > 0.01 {
					t.Errorf("seed %d: tree growth %.4g; want %.4g ± 2 %%", seed, g[0].TreeGrowth, tc.tree)
				}
			}
		})
	}
	want := "rss grew in pid 12 (python3): +38.9 MiB of the tree's +38.9 MiB over the soak"
	if g := grew(grewRecords(1, map[string]float64{"python3": 2048}), growing); len(g) != 1 || g[0].String() != want {
		t.Errorf("grew %v; want %q", g, want)
	}
}
