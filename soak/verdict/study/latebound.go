package study

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/soakd/soakd/soak/verdict"
)

// The most any test can do on the late-start designs (issue 41, item 2):
// a leak of mult× the floor that begins at a share of a 2 h soak's
// requests, on the slow designs' noise known exactly (0.5 MiB white plus
// 1 MiB AR(1) of 5 minutes). As for item 8 (bound.go), with the noise
// known the best linear unbiased estimate is generalised least squares.
// The model is the continuous hinge at the knot (a level, a free slope
// before the knot and the slope after it): its slope after the knot is
// unbiased both for a leak that starts there and for a straight leak
// from the start, so "0.9× the floor, no late start" is a null it can be
// tested against.

// LateBoundStarts and LateBoundMultiples are the late designs the bound
// is computed for: TestLateStartsFound's.
var (
	LateBoundStarts    = []float64{0.25, 0.5, 0.75}
	LateBoundMultiples = []float64{3, 6, 13}
)

// lateBoundKnots is the scan's grid: every 1 % of the soak's requests
// from its start (the line) to 90 %.
const lateBoundKnots = 91

// whitener is the Kalman filter of an AR(1) state of spread wander and
// step phi under white noise of spread white, on evenly spaced samples:
// apply returns a series' innovations over their standard deviations,
// the series whitened by the covariance's Cholesky factor (OracleSD's
// filter, kept per sample so that many series share it).
type whitener struct {
	phi      float64
	gain, sd []float64
}

func newWhitener(n int, phi, white, wander float64) whitener {
	w := whitener{phi: phi, gain: make([]float64, n), sd: make([]float64, n)}
	p := wander * wander
	for i := range n {
		f := p + white*white
		k := p / f
		w.gain[i], w.sd[i] = k, math.Sqrt(f)
		p = phi*phi*p*(1-k) + wander*wander*(1-phi*phi)
	}
	return w
}

func (w whitener) apply(x []float64) []float64 {
	out := make([]float64, len(x))
	var m float64 // the predicted state
	for i, v := range x {
		r := v - m
		m = w.phi * (m + w.gain[i]*r)
		out[i] = r / w.sd[i]
	}
	return out
}

// hingeContrast is the generalised least squares estimate of the slope
// after a knot at share s of the soak (0: the line) as a contrast on the
// whitened series: slope = a·ỹ, with sd its spread. x are the soak's
// samples as shares of its requests; the slope is in the units of the
// series per share.
type hingeContrast struct {
	a  []float64
	sd float64
}

func newHingeContrast(w whitener, x []float64, s float64) hingeContrast {
	cols := [][]float64{make([]float64, len(x)), make([]float64, len(x))}
	for i, v := range x {
		cols[0][i], cols[1][i] = 1, v
	}
	if s > 0 {
		post := make([]float64, len(x))
		for i, v := range x {
			cols[1][i], post[i] = math.Min(v, s), math.Max(v-s, 0)
		}
		cols = append(cols, post)
	}
	p := len(cols)
	for j := range cols {
		cols[j] = w.apply(cols[j])
	}
	g := make([][]float64, p)
	for i := range g {
		g[i] = make([]float64, p)
		for j := range g[i] {
			for k := range x {
				g[i][j] += cols[i][k] * cols[j][k]
			}
		}
	}
	e := make([]float64, p)
	e[p-1] = 1
	c := solve(g, e) // (X̃'X̃)⁻¹ e
	h := hingeContrast{a: make([]float64, len(x)), sd: math.Sqrt(c[p-1])}
	for j := range cols {
		for k := range x {
			h.a[k] += cols[j][k] * c[j]
		}
	}
	return h
}

// solve solves g·c = e by Gaussian elimination with partial pivoting (g
// is small and positive definite).
func solve(g [][]float64, e []float64) []float64 {
	p := len(e)
	m := make([][]float64, p)
	for i := range m {
		m[i] = append(append([]float64(nil), g[i]...), e[i])
	}
	for col := range p {
		piv := col
		for r := col + 1; r < p; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[piv][col]) {
				piv = r
			}
		}
		m[col], m[piv] = m[piv], m[col]
		for r := col + 1; r < p; r++ {
			f := m[r][col] / m[col][col]
			for k := col; k <= p; k++ {
				m[r][k] -= f * m[col][k]
			}
		}
	}
	c := make([]float64, p)
	for i := p - 1; i >= 0; i-- {
		s := m[i][p]
		for k := i + 1; k < p; k++ {
			s -= m[i][k] * c[k]
		}
		c[i] = s / m[i][i]
	}
	return c
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// LateBoundRow is the bound on one late design, the same at either rate
// (in floors the two rates are the same series): with the start known,
// the spread of the slope after it (SD, in floors) and the power at 1 %
// false leaks against 0.9× the floor and against the floor itself; with
// the start unknown, the scan's power against the same two nulls.
type LateBoundRow struct {
	Start, Mult         float64
	SD, Known09, Known1 float64
	Scan09, Scan1       float64
}

// LateBoundMin is, for one start, the smallest leak (× the floor) found
// in 90 % of runs at 1 % false leaks against 0.9× the floor, with the
// start known and by the scan.
type LateBoundMin struct {
	Start, Known, Scan float64
}

// LateBound is the bound on the late designs, over Sims draws of the
// noise: Threshold is the scan's level, the 99th percentile of the
// largest of the hinge's t-statistics over lateBoundKnots knots under a
// straight leak (the statistic's null law is the same for any slope and
// level, so one threshold serves 0.9× and 1×), and LineSD the spread of
// the whole soak's slope (knot 0), in floors.
type LateBound struct {
	Sims              int
	Threshold, LineSD float64
	Rows              []LateBoundRow
	Mins              []LateBoundMin
}

// lateBoundSetup is the 2 h design's soak samples as shares of its
// requests, the noise's whitener in floors over the soak (the bytes the
// floor adds over it), and the scan's contrasts.
func lateBoundSetup() (x []float64, w whitener, hs []hingeContrast, white, wander float64) {
	d := SlowDesign{Rate: SlowRates[0], SoakSec: 7200}
	sh := slowShape(d)
	total := d.Rate * d.SoakSec
	for _, p := range generate(sh, func(q, _ float64, _ verdict.Phase) (float64, int) { return q, 0 }) {
		if p.Phase == verdict.Soak {
			x = append(x, p.Value/total)
		}
	}
	unit := d.HorizonFloor() * total
	white, wander = 0.5*mib/unit, 1*mib/unit
	w = newWhitener(len(x), math.Exp(-sh.SampleSec/issueTau), white, wander)
	hs = make([]hingeContrast, lateBoundKnots)
	each(len(hs), func(k int) { hs[k] = newHingeContrast(w, x, float64(k)/100) })
	return x, w, hs, white, wander
}

// lateScan is the scan's noise draws and what each knot reads of a
// late leak: z[r][k] is draw r's t-statistic at knot k, mu[i][k] the
// slope knot k reads, on average, of a leak of one floor from
// LateBoundStarts[i].
type lateScan struct {
	hs        []hingeContrast
	z, mu     [][]float64
	threshold float64
}

// power is the share of draws in which the scan calls a leak of mult×
// the floor from LateBoundStarts[i] one against null× the floor.
func (s lateScan) power(i int, mult, null float64) float64 {
	hits := 0
	for _, z := range s.z {
		for k, h := range s.hs {
			if z[k]+(mult*s.mu[i][k]-null)/h.sd > s.threshold {
				hits++
				break
			}
		}
	}
	return float64(hits) / float64(len(s.z))
}

// NewLateBound computes the bound with sims draws of the noise (seed).
func NewLateBound(sims int, seed uint64) LateBound {
	x, w, hs, white, wander := lateBoundSetup()
	sc := lateScan{hs: hs, z: make([][]float64, sims), mu: make([][]float64, len(LateBoundStarts))}
	for i, s := range LateBoundStarts {
		m := make([]float64, len(x))
		for j, v := range x {
			m[j] = math.Max(v-s, 0)
		}
		mt := w.apply(m)
		sc.mu[i] = make([]float64, len(hs))
		for k, h := range hs {
			sc.mu[i][k] = dot(h.a, mt)
		}
	}
	phi := w.phi
	each(sims, func(r int) {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		e := make([]float64, len(x))
		level := wander * rng.NormFloat64()
		for j := range e {
			e[j] = level + white*rng.NormFloat64()
			level = phi*level + math.Sqrt(1-phi*phi)*wander*rng.NormFloat64()
		}
		et := w.apply(e)
		sc.z[r] = make([]float64, len(hs))
		for k, h := range hs {
			sc.z[r][k] = dot(h.a, et) / h.sd
		}
	})
	maxes := make([]float64, sims)
	for r, z := range sc.z {
		maxes[r] = z[0]
		for _, v := range z {
			maxes[r] = math.Max(maxes[r], v)
		}
	}
	sort.Float64s(maxes)
	sc.threshold = maxes[int(math.Ceil(0.99*float64(sims)))-1]
	b := LateBound{Sims: sims, Threshold: sc.threshold, LineSD: hs[0].sd}
	zq := normQuantile(0.99)
	for i, s := range LateBoundStarts {
		sd := hs[int(math.Round(100*s))].sd
		for _, mult := range LateBoundMultiples {
			b.Rows = append(b.Rows, LateBoundRow{Start: s, Mult: mult, SD: sd,
				Known09: normCDF((mult-0.9)/sd - zq), Known1: normCDF((mult-1)/sd - zq),
				Scan09: sc.power(i, mult, 0.9), Scan1: sc.power(i, mult, 1)})
		}
		lo, hi := 0.9, 20.0 // the scan's power rises with the leak
		for hi-lo > 0.005 {
			if mid := (lo + hi) / 2; sc.power(i, mid, 0.9) >= 0.9 {
				hi = mid
			} else {
				lo = mid
			}
		}
		b.Mins = append(b.Mins, LateBoundMin{Start: s, Known: 0.9 + (zq+normQuantile(0.9))*sd, Scan: hi})
	}
	return b
}

// Write prints the bound as docs/verdict-study.md's table.
func (b LateBound) Write(w io.Writer) {
	fmt.Fprintf(w, "the bound on a leak that starts late, 2 h, either rate, the noise known (GLS on the continuous hinge; %d draws):\n", b.Sims)
	fmt.Fprintf(w, "whole soak's slope SD %.3f floors; the scan over %d knots (0-90 %%) calls a leak above t = %.3f (1 %% of straight leaks at the null)\n",
		b.LineSD, lateBoundKnots, b.Threshold)
	fmt.Fprintf(w, "%-12s %9s %26s %26s\n", "leak, from", "SD/floor", "start known: vs 0.9× / 1×", "scan: vs 0.9× / 1×")
	for _, r := range b.Rows {
		fmt.Fprintf(w, "%-12s %9.3f %26s %26s\n", fmt.Sprintf("%g×, %g %%", r.Mult, 100*r.Start), r.SD,
			fmt.Sprintf("%.1f %% / %.1f %%", 100*r.Known09, 100*r.Known1),
			fmt.Sprintf("%.1f %% / %.1f %%", 100*r.Scan09, 100*r.Scan1))
	}
	for _, m := range b.Mins {
		fmt.Fprintf(w, "from %g %%: found in 90 %% (1 %% false at 0.9×) from %.2f× with the start known, %.2f× by the scan\n", 100*m.Start, m.Known, m.Scan)
	}
}
