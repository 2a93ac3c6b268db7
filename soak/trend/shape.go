package trend

import "math"

// Shapes: the alternatives to a straight line that a verdict weighs before
// it calls growth a leak. A cache or an allocator warming up decelerates
// (a hinge: a slope that changes once); a one-off allocation is a step;
// retention in chunks is a staircase. Each is fitted by least squares on
// the (binned) series; the caller compares their residual sums of squares
// by an information criterion. They are O(n²) at most: bin first.

// LinearSS is the residual sum of squares of the least-squares line.
func LinearSS(x, y []float64) float64 {
	_, ss, ok := lsq([][]float64{ones(len(x)), x}, y)
	if !ok {
		return variance(y) * float64(len(y))
	}
	return ss
}

// HingeFit is a continuous two-segment line: slope Before up to the knot
// at x = Knot (the Index-th point), Before+Change after it.
type HingeFit struct {
	Knot          float64
	Index         int
	Before, After float64   // slopes
	SS            float64   // residual sum of squares
	Resid         []float64 // residuals
}

// Hinge fits the best continuous two-segment line, trying as the knot
// each point that leaves a sixth of the points (and at least three) on
// either side: a knot among the last few points would let one stray
// sample pass for a change of slope. ok is false below 6 points.
func Hinge(x, y []float64) (HingeFit, bool) {
	n := len(x)
	best := HingeFit{SS: math.Inf(1)}
	if n < 6 {
		return best, false
	}
	h := make([]float64, n)
	edge := max(2, n/6)
	for k := edge; k < n-edge; k++ {
		for i := range x {
			h[i] = math.Max(0, x[i]-x[k])
		}
		c, ss, ok := lsq([][]float64{ones(n), x, h}, y)
		if ok && ss < best.SS {
			best = HingeFit{Knot: x[k], Index: k, Before: c[1], After: c[1] + c[2], SS: ss}
		}
	}
	if math.IsInf(best.SS, 1) {
		return best, false
	}
	best.Resid = hingeResid(x, y, best)
	return best, true
}

// HingeAt fits the continuous two-segment line with its knot at the k-th
// point; ok is false when the columns are collinear.
func HingeAt(x, y []float64, k int) (HingeFit, bool) {
	n := len(x)
	if k <= 0 || k >= n-1 {
		return HingeFit{}, false
	}
	h := make([]float64, n)
	for i := range x {
		h[i] = math.Max(0, x[i]-x[k])
	}
	c, ss, ok := lsq([][]float64{ones(n), x, h}, y)
	if !ok {
		return HingeFit{}, false
	}
	f := HingeFit{Knot: x[k], Index: k, Before: c[1], After: c[1] + c[2], SS: ss}
	f.Resid = hingeResid(x, y, f)
	return f, true
}

func hingeResid(x, y []float64, h HingeFit) []float64 {
	r := make([]float64, len(x))
	for i := range x {
		r[i] = y[i] - h.Before*x[i] - (h.After-h.Before)*math.Max(0, x[i]-h.Knot)
	}
	center(r)
	return r
}

// StepFit is a line with one jump: level Size higher from the Index-th
// point on, with a common Slope.
type StepFit struct {
	Index int
	Size  float64
	Slope float64
	SS    float64
	Resid []float64
}

// StepLine fits the best line-plus-one-step, trying each point from the
// second to the second last as the first after the step. ok is false
// below 5 points.
func StepLine(x, y []float64) (StepFit, bool) {
	n := len(x)
	best := StepFit{SS: math.Inf(1)}
	if n < 5 {
		return best, false
	}
	st := make([]float64, n)
	for k := 1; k < n-1; k++ {
		for i := range st {
			st[i] = 0
			if i >= k {
				st[i] = 1
			}
		}
		c, ss, ok := lsq([][]float64{ones(n), x, st}, y)
		if ok && ss < best.SS {
			best = StepFit{Index: k, Size: c[2], Slope: c[1], SS: ss}
		}
	}
	if math.IsInf(best.SS, 1) {
		return best, false
	}
	best.Resid = make([]float64, n)
	for i := range x {
		best.Resid[i] = y[i] - best.Slope*x[i]
		if i >= best.Index {
			best.Resid[i] -= best.Size
		}
	}
	center(best.Resid)
	return best, true
}

// Levels is the best piecewise-constant fit with a given number of
// segments: Starts holds the first index of each segment after the first.
type Levels struct {
	Starts []int
	Means  []float64 // each segment's level
	SS     float64
	Resid  []float64
}

// Staircase fits piecewise-constant levels with 1 to maxSegs segments by
// exact dynamic programming (Bellman 1961; the optimal partition that
// PELT, Killick et al. 2012, finds faster) and returns the best fit for
// each count: out[s-1] has s segments. It is O(maxSegs·n²).
func Staircase(y []float64, maxSegs int) []Levels {
	n := len(y)
	if n == 0 || maxSegs < 1 {
		return nil
	}
	maxSegs = min(maxSegs, n)
	ps, ps2 := make([]float64, n+1), make([]float64, n+1)
	for i, v := range y {
		ps[i+1], ps2[i+1] = ps[i]+v, ps2[i]+v*v
	}
	cost := func(a, b int) float64 { // SS of y[a:b] about its mean
		m := float64(b - a)
		s := ps[b] - ps[a]
		return math.Max(0, ps2[b]-ps2[a]-s*s/m)
	}
	// best[s][j]: least SS of y[:j] in s+1 segments; from[s][j] the start
	// of the last segment.
	best := make([][]float64, maxSegs)
	from := make([][]int, maxSegs)
	for s := range best {
		best[s], from[s] = make([]float64, n+1), make([]int, n+1)
		for j := range best[s] {
			best[s][j] = math.Inf(1)
		}
	}
	for j := 1; j <= n; j++ {
		best[0][j] = cost(0, j)
	}
	for s := 1; s < maxSegs; s++ {
		for j := s + 1; j <= n; j++ {
			for i := s; i < j; i++ {
				if c := best[s-1][i] + cost(i, j); c < best[s][j] {
					best[s][j], from[s][j] = c, i
				}
			}
		}
	}
	out := make([]Levels, maxSegs)
	for s := range out {
		starts := make([]int, s)
		for k, j := s, n; k > 0; k-- {
			j = from[k][j]
			starts[k-1] = j
		}
		out[s] = levels(y, starts, best[s][n])
	}
	return out
}

func levels(y []float64, starts []int, ss float64) Levels {
	l := Levels{Starts: starts, SS: ss, Resid: make([]float64, len(y))}
	bounds := append(append([]int{0}, starts...), len(y))
	for k := 0; k+1 < len(bounds); k++ {
		seg := y[bounds[k]:bounds[k+1]]
		var m float64
		for _, v := range seg {
			m += v
		}
		m /= float64(len(seg))
		l.Means = append(l.Means, m)
		for i, v := range seg {
			l.Resid[bounds[k]+i] = v - m
		}
	}
	return l
}

// center subtracts the mean.
func center(v []float64) {
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for i := range v {
		v[i] -= m
	}
}

func ones(n int) []float64 {
	o := make([]float64, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

func variance(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / float64(len(v))
}

// lsq solves the least-squares problem y ≈ Σ cₖ·colsₖ by the normal
// equations, with the columns centred and scaled first so that large x
// (millions of requests) and large y (hundreds of MiB) keep their
// precision. It returns the coefficients, the residual sum of squares,
// and false when the columns are collinear.
func lsq(cols [][]float64, y []float64) ([]float64, float64, bool) {
	p, n := len(cols), len(y)
	if n < p {
		return nil, 0, false
	}
	scale := make([]float64, p)
	for k, c := range cols {
		for _, v := range c {
			scale[k] = math.Max(scale[k], math.Abs(v))
		}
		if scale[k] == 0 {
			return nil, 0, false
		}
	}
	a := make([][]float64, p)
	for i := range a {
		a[i] = make([]float64, p+1)
		for j := range p {
			for r := range n {
				a[i][j] += cols[i][r] / scale[i] * cols[j][r] / scale[j]
			}
		}
		for r := range n {
			a[i][p] += cols[i][r] / scale[i] * y[r]
		}
	}
	c, ok := solve(a)
	if !ok {
		return nil, 0, false
	}
	for k := range c {
		c[k] /= scale[k]
	}
	var ss float64
	for r := range n {
		e := y[r]
		for k := range p {
			e -= c[k] * cols[k][r]
		}
		ss += e * e
	}
	return c, ss, true
}

// solve solves the augmented system a by Gaussian elimination with
// partial pivoting.
func solve(a [][]float64) ([]float64, bool) {
	p := len(a)
	for col := range p {
		piv := col
		for r := col + 1; r < p; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		for r := col + 1; r < p; r++ {
			f := a[r][col] / a[col][col]
			for k := col; k <= p; k++ {
				a[r][k] -= f * a[col][k]
			}
		}
	}
	c := make([]float64, p)
	for r := p - 1; r >= 0; r-- {
		s := a[r][p]
		for k := r + 1; k < p; k++ {
			s -= a[r][k] * c[k]
		}
		c[r] = s / a[r][r]
	}
	return c, true
}

// CurveFit is the quadratic term of a least-squares quadratic: its
// coefficient C (of x²), its standard error SE under independent errors,
// U, the part of x² that the line does not explain (C = ΣUy/ΣU²; a caller
// that corrects SE for autocorrelation multiplies its variance by
// VarianceInflation(U, ρ)), and the quadratic's residuals.
type CurveFit struct {
	C, SE    float64
	U, Resid []float64

	q1, mx, scale float64
}

// SlopeAt is the quadratic's slope at x.
func (cf CurveFit) SlopeAt(x float64) float64 {
	return cf.q1/cf.scale + 2*cf.C*(x-cf.mx)
}

// Curvature fits y = a + bx + cx² by least squares; ok is false below 5
// points.
func Curvature(x, y []float64) (CurveFit, bool) {
	n := len(x)
	if n < 5 {
		return CurveFit{}, false
	}
	var mx float64
	for _, v := range x {
		mx += v
	}
	mx /= float64(n)
	xs := make([]float64, n) // centred and scaled, for precision
	var scale float64
	for i, v := range x {
		xs[i] = v - mx
		scale = math.Max(scale, math.Abs(xs[i]))
	}
	if scale == 0 {
		return CurveFit{}, false
	}
	sq := make([]float64, n)
	for i := range xs {
		xs[i] /= scale
		sq[i] = xs[i] * xs[i]
	}
	line, _, ok := lsq([][]float64{ones(n), xs}, sq)
	if !ok {
		return CurveFit{}, false
	}
	quad, ss, ok := lsq([][]float64{ones(n), xs, sq}, y)
	if !ok {
		return CurveFit{}, false
	}
	cf := CurveFit{U: make([]float64, n), Resid: make([]float64, n), q1: quad[1], mx: mx, scale: scale}
	var uu float64
	for i := range xs {
		cf.U[i] = sq[i] - line[0] - line[1]*xs[i]
		uu += cf.U[i] * cf.U[i]
		cf.Resid[i] = y[i] - quad[0] - quad[1]*xs[i] - quad[2]*sq[i]
	}
	if uu == 0 {
		return CurveFit{}, false
	}
	s2 := scale * scale
	cf.C, cf.SE = quad[2]/s2, math.Sqrt(ss/float64(n-3)/uu)/s2
	return cf, true
}
