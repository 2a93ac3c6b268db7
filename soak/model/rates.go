package model

import (
	"slices"

	"github.com/soakd/soakd/soak/verdict"
)

// Rates turns a counter's readings into its per-second rate between
// consecutive readings of one incarnation, each rate at the later
// reading's requests, time and phase: what the verdict judges for a
// counter, so that a counter rising steadily is no leak. A fall (the
// counter reset) or a repeated time gives no rate. quantum is the
// readings' resolution; the rates' is quantum over the median interval.
func Rates(pts []verdict.Point, quantum float64) ([]verdict.Point, float64) {
	out := make([]verdict.Point, 0, len(pts))
	var gaps []float64
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dt := b.Seconds - a.Seconds
		if dt <= 0 || b.Value < a.Value || a.Incarnation != b.Incarnation {
			continue
		}
		gaps = append(gaps, dt)
		p := b
		p.Value = (b.Value - a.Value) / dt
		out = append(out, p)
	}
	if len(gaps) == 0 {
		return out, quantum
	}
	slices.Sort(gaps)
	return out, quantum / gaps[len(gaps)/2]
}
