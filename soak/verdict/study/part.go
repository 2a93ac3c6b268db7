package study

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/soakd/soakd/soak/verdict"
)

// PartTally is one kind's series judged whole (as the tree's RSS) and as
// a part of the process's memory (as its PSS's anonymous pages or its
// USS's dirty ones): the whole less a constant, 50–90 % of its level at
// the load's start, so that the part grows by exactly what the whole
// does from a level that is a tenth to a half of the whole's.
type PartTally struct {
	Kind string
	Leak bool
	N    int
	// Same: the part, judged against the whole's size at the load's start
	// (verdict.ResourceOptions.Size, as the runner judges PSS and USS),
	// read as the whole did.
	Same int
	// Leak verdicts: the whole's; the part's against the whole's size;
	// the part's against its own level alone (before issue 40).
	LeaksWhole, LeaksPart, LeaksOwn int
	// Held: leaks the part alone read and the part judged against the
	// whole's size does not; HeldEligible: of them, those the study
	// counts as eligible (see Tally.add and settled), which the whole
	// also missed (after a restart, the driving incarnation's growth is
	// under its level while the soak's is not).
	Held, HeldEligible int
}

// RunPart analyses n series of kind k, seeded by seed, whole and as a part.
func RunPart(k Kind, n int, seed uint64) PartTally {
	t := PartTally{Kind: k.Name, Leak: k.Leak}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)*7919+uint64(len(k.Name))))
		s := k.Make(rng)
		whole := verdict.AnalyzeResource(s.Points, s.Opt)
		size := verdict.StartLevel(whole, nil)
		cut := math.Round((1-uniform(rng, 0.1, 0.5))*size/4096) * 4096
		part := make([]verdict.Point, len(s.Points))
		for j, p := range s.Points {
			p.Value -= cut
			part[j] = p
		}
		own := verdict.AnalyzeResource(part, s.Opt)
		opt := s.Opt
		opt.Size = size
		judged := verdict.AnalyzeResource(part, opt)
		t.N++
		if judged.Verdict == whole.Verdict {
			t.Same++
		}
		if own.Verdict == verdict.Leak && judged.Verdict != verdict.Leak {
			t.Held++
			if g := s.Truth * s.SoakRequests(); k.Leak && g >= 5*s.NoiseSD && meaningful(s) && settled(s, g) {
				t.HeldEligible++
			}
		}
		for _, c := range []struct {
			r verdict.Resource
			n *int
		}{{whole, &t.LeaksWhole}, {judged, &t.LeaksPart}, {own, &t.LeaksOwn}} {
			if c.r.Verdict == verdict.Leak {
				*c.n++
			}
		}
	}
	return t
}

// PartTable runs every kind with n series each and writes the table.
func PartTable(w io.Writer, n int, seed uint64) []PartTally {
	var out []PartTally
	fmt.Fprintf(w, "%-22s %5s %6s %6s %11s %10s %10s %5s %8s\n", "model", "truth", "series", "same", "leaks whole", "leaks part", "part alone", "held", "eligible")
	for _, k := range Kinds() {
		t := RunPart(k, n, seed)
		out = append(out, t)
		truth := "none"
		if k.Leak {
			truth = "leak"
		}
		fmt.Fprintf(w, "%-22s %5s %6d %6d %11d %10d %10d %5d %8d\n", t.Kind, truth, t.N, t.Same, t.LeaksWhole, t.LeaksPart, t.LeaksOwn, t.Held, t.HeldEligible)
	}
	return out
}
