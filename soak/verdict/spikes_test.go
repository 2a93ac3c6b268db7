package verdict

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// spiky is n samples of white noise (SD 0.5 MiB, on pages) plus, when
// cycle > 0, a sawtooth of 8 MiB falling every cycle samples, with
// spikes of 20 SDs, up and down in turn, at every spikeEvery-th sample
// from 7 on.
func spiky(n, cycle, spikeEvery int, seed uint64) *series {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := &series{}
	for i := range n {
		v := 100*mib + 0.5*mib*rng.NormFloat64()
		if cycle > 0 {
			v += 8 * mib * float64(i%cycle) / float64(cycle)
		}
		if i >= 7 && (i-7)%spikeEvery == 0 {
			v += math.Copysign(10*mib, float64(((i-7)/spikeEvery)%2)-0.5)
		}
		s.x, s.y, s.sec = append(s.x, float64(i)*100), append(s.y, math.Round(v/4096)*4096), append(s.sec, float64(i))
	}
	return s
}

// TestSpikesAreNotCycles: a one-sample spike, up or down, falls as far
// in one change as a collection does, but comes straight back; heavy-
// tailed noise (Student t, 3 dof) put 5–32 % of trendless runs on a
// per-cycle envelope of a few points this way, their slopes spreading
// 2–7× as much. Spikes alone make no cycles, and a sawtooth's drops are
// found through them, none at a spike.
func TestSpikesAreNotCycles(t *testing.T) {
	for seed := range uint64(5) {
		if got := spiky(1800, 0, 97, seed).cycles(4096); got != nil {
			t.Errorf("seed %d: white noise with 18 spikes of 20 SDs read as %d cycles at %v; want none", seed, len(got), got)
		}
		if got := longestCycle(spiky(1800, 0, 97, seed), 4096); got != 0 {
			t.Errorf("seed %d: white noise with spikes has a longest cycle of %g requests; want 0", seed, got)
		}
		s := spiky(1800, 150, 97, seed)
		got := s.cycles(4096)
		var want []int
		for i := 150; i < 1800; i += 150 {
			want = append(want, i)
		}
		if !slices.Equal(got, want) {
			t.Errorf("seed %d: a 150-sample sawtooth with spikes: cycles start at %v; want %v", seed, got, want)
		}
	}
}
