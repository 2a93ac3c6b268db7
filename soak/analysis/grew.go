package analysis

import (
	"slices"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/trend"
	"github.com/soakd/soakd/soak/verdict"
)

// grewBins bounds the points of each series fitted by grew: Theil–Sen is
// O(n²), and a long run samples each process thousands of times.
const grewBins = 64

// grewMinPoints is the fewest soak samples of a process that grew fits.
const grewMinPoints = 6

// grew names the process whose own RSS carries the tree's growth, when
// the RSS is growing (model.Growing) and the soak's samples hold two or
// more processes: each process's RSS (procs.csv) and the tree's are
// fitted against the requests over the soak, by Theil–Sen on medians of
// up to grewBins bins, and the growth over each series' span compared.
// The process with the most is named when it carries more than half the
// tree's. A recycled worker's growth is in its own short life, so none
// may carry half: then none is named.
func grew(recs []model.Record, rss verdict.Resource) []model.Grew {
	if !model.Growing(rss) {
		return nil
	}
	type series struct {
		x, y []float64
		name string
	}
	procs := map[[2]uint64]*series{}
	var tx, ty []float64
	var root int32
	multi := false
	for _, r := range recs {
		if r.Phase != verdict.Soak || !r.Alive || !r.RSSValid || len(r.Members) == 0 {
			continue
		}
		multi = multi || len(r.Members) > 1
		root = r.RootPID
		tx, ty = append(tx, float64(r.Requests)), append(ty, float64(r.RSS))
		for _, m := range r.Members {
			k := [2]uint64{uint64(m.PID), m.Start}
			s := procs[k]
			if s == nil {
				s = &series{name: m.Name}
				procs[k] = s
			}
			s.x, s.y = append(s.x, float64(r.Requests)), append(s.y, float64(m.RSS))
		}
	}
	tree := fittedGrowth(tx, ty)
	if !multi || tree <= 0 {
		return nil
	}
	var best *model.Grew
	for k, s := range procs {
		g := fittedGrowth(s.x, s.y)
		if best == nil || g > best.Growth || (g == best.Growth && int32(k[0]) < best.PID) {
			best = &model.Grew{Resource: "rss", PID: int32(k[0]), Start: k[1], Name: s.name, Growth: g}
		}
	}
	if best == nil || best.Growth <= tree/2 {
		return nil
	}
	best.TreeGrowth, best.Unit, best.Root = tree, "bytes", best.PID == root
	return []model.Grew{*best}
}

// fittedGrowth is y's Theil–Sen growth over x's whole span (the bins'
// mean x would cut half a bin off each end), 0 with fewer than
// grewMinPoints points.
func fittedGrowth(x, y []float64) float64 {
	if len(x) < grewMinPoints {
		return 0
	}
	b := trend.Bin(x, y, grewBins, trend.ByMedian)
	if len(b.X) < 2 {
		return 0
	}
	lo, hi := slices.Min(x), slices.Max(x)
	return trend.TheilSen(b.X, b.Y).Slope * (hi - lo)
}
