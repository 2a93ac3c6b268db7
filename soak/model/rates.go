package model

import (
	"slices"

	"github.com/soakd/soakd/soak/verdict"
)

// Rates turns a counter's readings into its rate per request between
// consecutive readings of one incarnation, each rate at the later
// reading's requests, time and phase: what the verdict judges for a
// counter, so that a counter rising steadily with the load is no leak,
// and one whose increments per request rise is growth. Per request, not
// per second, so that a throughput that drifts (a busy machine) does not
// read as growth. Readings with no request between them (the baseline,
// the cool-down), a fall (the counter reset) or a restart give no rate.
// quantum is the readings' resolution; the rates' is quantum over the
// median requests between readings.
func Rates(pts []verdict.Point, quantum float64) ([]verdict.Point, float64) {
	out := make([]verdict.Point, 0, len(pts))
	var gaps []float64
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dn := b.Requests - a.Requests
		if dn <= 0 || b.Value < a.Value || a.Incarnation != b.Incarnation {
			continue
		}
		gaps = append(gaps, dn)
		p := b
		p.Value = (b.Value - a.Value) / dn
		out = append(out, p)
	}
	if len(gaps) == 0 {
		return out, quantum
	}
	slices.Sort(gaps)
	return out, quantum / gaps[len(gaps)/2]
}
