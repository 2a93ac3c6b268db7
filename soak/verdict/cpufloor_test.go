package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// floorSeries is a cost that doubles over 40 windows of a 600 s soak at
// rate req/s (3 % white noise): a slope of 100 µs/request over 600 s,
// which over 24 h adds 1.44 % of a core per request a second.
func floorSeries(rate float64) (at, req, cost []float64) {
	rng := rand.New(rand.NewPCG(7, 40))
	for i := range 40 {
		t := 15 * (float64(i) + 0.5)
		at = append(at, t)
		req = append(req, rate*t)
		cost = append(cost, 100e-6*(1+t/600)*(1+0.03*rng.NormFloat64()))
	}
	return at, req, cost
}

// TestCostFloor: the same doubling cost is a CPU leak at 100 req/s (it
// adds 144 % of a core over 24 h), negligible at 2 req/s (2.9 %, under
// the floor of 10 %: not a leak, and decided not rising), and
// inconclusive at 7 req/s, where its interval straddles the floor.
func TestCostFloor(t *testing.T) {
	for _, c := range []struct {
		rate                      float64
		rising, inconclusive, neg bool
		reason                    string
	}{
		{100, true, false, false, "CPU per request rising"},
		{7, false, true, false, "a longer soak would tell whether it clears the floor"},
		{2, false, false, true, "not a CPU leak"},
		{0, true, false, false, "CPU per request rising"}, // no throughput: no floor
	} {
		at, req, cost := floorSeries(c.rate)
		if c.rate == 0 {
			req = nil
		}
		d := costDriftOn(at, req, cost, Contention{}, c.rate)
		t.Logf("%g req/s: floor %.3g s/h, upper end adds %.3g cores: %s", c.rate, d.FloorPerHour, d.HorizonCores, d.Reason)
		if d.Rising != c.rising || d.Inconclusive != c.inconclusive || d.UnderFloor() != c.neg || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%g req/s: rising %v, inconclusive %v, under the floor %v, reason %q; want %v, %v, %v, a reason with %q",
				c.rate, d.Rising, d.Inconclusive, d.UnderFloor(), d.Reason, c.rising, c.inconclusive, c.neg, c.reason)
		}
		a, m := CPUDecided(CPU{Bound: BoundIO, Cost: d}, 600)
		switch {
		case c.rising && a != "io, rising":
			t.Errorf("%g req/s: decided %q, %q; want rising", c.rate, a, m)
		case c.neg && a != "io, not rising":
			t.Errorf("%g req/s: decided %q, %q; want not rising", c.rate, a, m)
		case c.inconclusive && (a != "" || !strings.Contains(m, "undecided")):
			t.Errorf("%g req/s: decided %q, %q; want undecided", c.rate, a, m)
		}
	}
}

// TestCostNotRisingText: the decided text names each bar that decided it.
func TestCostNotRisingText(t *testing.T) {
	for _, c := range []struct {
		name string
		d    CostDrift
		want []string
	}{
		{"floor only", CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-3, 1e-3}, FloorPerHour: 2e-3, HorizonCores: 0.05},
			[]string{"not rising: its rise adds at most 5.0 % of a core over 24 h", "the floor is 10 %"}},
		{"both", CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-5, 1e-5}, FloorPerHour: 2e-3, HorizonCores: 0.0002},
			[]string{"0.02 % of a core", "at most +1 % (the bar is 25 %)"}},
		{"relative only", CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-5, 1e-5}}, []string{"not rising: its rise over the soak is at most +1 %"}},
		{"neither", CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-3, 1e-3}, FloorPerHour: 5e-4, HorizonCores: 0.2}, []string{""}},
	} {
		got := c.d.NotRising(360)
		for _, w := range c.want {
			if !strings.Contains(got, w) || (w == "") != (got == "") {
				t.Errorf("%s: got %q; want a text with %q", c.name, got, w)
			}
		}
	}
	_, m := CPUDecided(CPU{Bound: BoundIO, Cost: CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-3, 1e-3}, FloorPerHour: 5e-4, HorizonCores: 0.2}}, 3600)
	if !strings.Contains(m, "nor to add less than 10 % of a core over 24 h at this throughput (its upper end adds 20 %)") {
		t.Errorf("missing = %q; want it to name the floor and what the upper end adds", m)
	}
}
