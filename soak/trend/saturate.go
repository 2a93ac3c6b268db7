package trend

import "math"

// SaturationFit is the best curve that slows and stops, y = a + b·u(x)
// with b ≥ 0 and u one of two families: a cache that fills,
// u = 1 − e^(−(x−x₀)/τ), and growth that slows without end,
// u = ((x−x₀+c)/span)^p with 0 < p < 1 (a √-creep at p = ½), x₀ the first
// x; either held to add at most a cap over a horizon of h more x after
// the last.
type SaturationFit struct {
	Tau    float64   // the exponential's time constant, in x; 0 for a power
	Power  float64   // the power p; 0 for an exponential
	B      float64   // the coefficient b
	SS     float64   // residual sum of squares
	Capped bool      // the cap bound b
	Resid  []float64 // residuals
}

// Saturation fits both families by least squares over grids of their
// shape (τ from a fiftieth of x's span to a thousand spans; p from 0.05
// to 0.95 with the origin c at 0, a twentieth, a fifth and one span
// before x₀), with b held to 0 ≤ b·(u(X+h) − u(X)) ≤ capped (X the
// span): the curve adds at most capped over the h that follow. A curve
// close to a line (τ long, p near 1) has its slope held to about
// capped/h. ok is false below 4 points.
func Saturation(x, y []float64, h, capped float64) (SaturationFit, bool) {
	n := len(x)
	best := SaturationFit{SS: math.Inf(1)}
	if n < 4 || !(h > 0) || capped < 0 {
		return best, false
	}
	span := x[n-1] - x[0]
	if !(span > 0) {
		return best, false
	}
	u := make([]float64, n)
	try := func(f SaturationFit, at func(float64) float64) {
		for i := range x {
			u[i] = at(x[i] - x[0])
		}
		if c, ok := capFit(u, y, at(span+h)-at(span), capped, best.SS); ok {
			c.Tau, c.Power = f.Tau, f.Power
			best = c
		}
	}
	const steps = 120
	for s := 0; s <= steps; s++ {
		tau := span / 50 * math.Pow(50000, float64(s)/steps)
		try(SaturationFit{Tau: tau}, func(t float64) float64 { return -math.Expm1(-t / tau) })
	}
	for p := 0.05; p < 0.96; p += 0.05 {
		for _, c := range []float64{0, span / 20, span / 5, span} {
			if c == 0 && p < 0.2 {
				continue // all its growth at the first point
			}
			try(SaturationFit{Power: p}, func(t float64) float64 { return math.Pow((t+c)/span, p) })
		}
	}
	if math.IsInf(best.SS, 1) {
		return best, false
	}
	return best, true
}

// capFit fits y ≈ a + b·u with 0 ≤ b·g ≤ capped by least squares, and
// keeps it when its residual sum of squares is under than.
func capFit(u, y []float64, g, capped, than float64) (SaturationFit, bool) {
	n := float64(len(y))
	var mu, my float64
	for i := range y {
		mu += u[i]
		my += y[i]
	}
	mu, my = mu/n, my/n
	var suu, suy float64
	for i := range y {
		suu += (u[i] - mu) * (u[i] - mu)
		suy += (u[i] - mu) * (y[i] - my)
	}
	if !(suu > 0) || math.IsNaN(suy) {
		return SaturationFit{}, false
	}
	f := SaturationFit{B: math.Max(suy/suu, 0)}
	if g > 0 && f.B*g > capped {
		f.B, f.Capped = capped/g, true
	}
	for i := range y {
		e := y[i] - my - f.B*(u[i]-mu)
		f.SS += e * e
	}
	if !(f.SS < than) {
		return SaturationFit{}, false
	}
	f.Resid = make([]float64, len(y))
	for i := range y {
		f.Resid[i] = y[i] - my - f.B*(u[i]-mu)
	}
	return f, true
}
