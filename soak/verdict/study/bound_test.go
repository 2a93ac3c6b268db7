package study

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// denseOracleSD is OracleSD the long way: the covariance written out,
// its Cholesky factor, and (X'Σ⁻¹X)⁻¹.
func denseOracleSD(d SlowDesign, warmup bool) float64 {
	sh := slowShape(d)
	var pts []verdict.Point
	for _, p := range generate(sh, func(q, _ float64, _ verdict.Phase) (float64, int) { return math.Max(q, 0), 0 }) {
		if warmup || p.Phase == verdict.Soak {
			pts = append(pts, p)
		}
	}
	n := len(pts)
	phi := math.Exp(-sh.SampleSec / issueTau)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, i+1)
		for j := range l[i] {
			l[i][j] = mib * mib * math.Pow(phi, float64(i-j))
		}
		l[i][i] += 0.25 * mib * mib
	}
	for j := range n {
		s := l[j][j]
		for k := range j {
			s -= l[j][k] * l[j][k]
		}
		l[j][j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := l[i][j]
			for k := range j {
				s -= l[i][k] * l[j][k]
			}
			l[i][j] = s / l[j][j]
		}
	}
	whiten := func(x func(int) float64) []float64 {
		y := make([]float64, n)
		for i := range n {
			s := x(i)
			for k := range i {
				s -= l[i][k] * y[k]
			}
			y[i] = s / l[i][i]
		}
		return y
	}
	a := whiten(func(int) float64 { return 1 })
	b := whiten(func(i int) float64 { return pts[i].Value })
	var aa, ab, bb float64
	for i := range n {
		aa, ab, bb = aa+a[i]*a[i], ab+a[i]*b[i], bb+b[i]*b[i]
	}
	return math.Sqrt(aa / (aa*bb - ab*ab))
}

// olsSD is the spread of the ordinary least squares slope over the soak
// alone under the same noise: what a fit that ignores the noise's
// correlation, as a Sen slope roughly does, can reach.
func olsSD(d SlowDesign) float64 {
	sh := slowShape(d)
	var q []float64
	for _, p := range generate(sh, func(q, _ float64, ph verdict.Phase) (float64, int) { return q, 0 }) {
		if p.Phase == verdict.Soak {
			q = append(q, p.Value)
		}
	}
	var mean float64
	for _, v := range q {
		mean += v
	}
	mean /= float64(len(q))
	phi := math.Exp(-sh.SampleSec / issueTau)
	var num, den float64
	for i := range q {
		den += (q[i] - mean) * (q[i] - mean)
		for j := range q {
			c := mib * mib * math.Pow(phi, math.Abs(float64(i-j)))
			if i == j {
				c += 0.25 * mib * mib
			}
			num += (q[i] - mean) * (q[j] - mean) * c
		}
	}
	return math.Sqrt(num) / den
}

// TestOracleSD: the Kalman filter's O(n) form equals the dense
// generalised least squares, and beats ordinary least squares by little
// (the trend is a polynomial, so least squares is nearly efficient).
func TestOracleSD(t *testing.T) {
	for _, d := range []SlowDesign{{Rate: 100, SoakSec: 600}, {Rate: 1000, SoakSec: 900}} {
		for _, warm := range []bool{false, true} {
			if got, want := d.OracleSD(warm), denseOracleSD(d, warm); math.Abs(got/want-1) > 1e-6 {
				t.Errorf("%s, warm-up %v: Kalman form %.6g B/req; dense %.6g", d.Name(), warm, got, want)
			}
		}
		got := d.OracleSD(false)
		ols := olsSD(d)
		t.Logf("%s: GLS %.4g, OLS %.4g B/req", d.Name(), got, ols)
		if got > ols || got < 0.7*ols {
			t.Errorf("%s: GLS %.4g B/req against OLS %.4g; want a little under it", d.Name(), got, ols)
		}
	}
}

// TestItem8Bound: with the noise known exactly, no test on the soak's
// samples can find 90 % of leaks 1.5× the floor over 2 h and call ≤ 1 %
// of leaks 0.9× the floor leaks; one that also knows the warm-up minute
// carries no leak can, by a few tenths of a point (docs/verdict-study.md,
// "Item 8's two bars against each other"). At 8 h any can with room;
// against no leak at all, at 2 h too.
func TestItem8Bound(t *testing.T) {
	var buf bytes.Buffer
	rows := Item8Bound(&buf)
	t.Log("\n" + buf.String())
	if len(rows) != len(SlowRates)*len(SlowSoaks) || strings.Count(buf.String(), "\n") != len(rows)+2 {
		t.Fatalf("got %d rows:\n%s", len(rows), buf.String())
	}
	for _, r := range rows {
		name := r.Design.Name()
		switch r.Design.SoakSec {
		case 7200:
			if r.Power < 0.87 || r.Power >= 0.9 || r.Min09 <= 1.5 || r.Min09 > 1.53 {
				t.Errorf("%s: the most found at 1.5× is %.1f %%, 90 %% from %.3f×; want 87–90 %% and 1.50–1.53×", name, 100*r.Power, r.Min09)
			}
			if r.WarmPower < 0.9 || r.WarmPower > 0.91 {
				t.Errorf("%s: with the warm-up, the most found at 1.5× is %.1f %%; want 90–91 %%", name, 100*r.WarmPower)
			}
			if r.Min0 > 0.8 || r.Min1 < 1.55 || r.Min1 > 1.65 {
				t.Errorf("%s: 90 %% found from %.2f× against no leak, from %.2f× against the floor; want under the floor, and 1.55–1.65×", name, r.Min0, r.Min1)
			}
		case 28800:
			if r.Power < 0.999 {
				t.Errorf("%s: the most found at 1.5× is %.2f %%; want ≥ 99.9 %%", name, 100*r.Power)
			}
		}
	}
	// The two rates are the same series in bytes.
	if a, b := rows[1].SD, rows[len(SlowSoaks)+1].SD; math.Abs(a/b-1) > 1e-9 {
		t.Errorf("2 h: SD over the floor %.6f at 100/s, %.6f at 1 000/s; want equal", a, b)
	}
}

// TestItem8Curve: a row for each multiple and rate, whose leaks and
// misses add up to its runs (every design is above the floor, so every
// run that is not a leak is a miss with a reason).
func TestItem8Curve(t *testing.T) {
	var buf bytes.Buffer
	rows := Item8Curve(&buf, 3, 1, 2)
	if len(rows) != len(CurveMultiples)*len(SlowRates) || strings.Count(buf.String(), "\n") != len(rows)+2 {
		t.Fatalf("got %d rows:\n%s", len(rows), buf.String())
	}
	for _, r := range rows {
		missed := 0
		for _, c := range r.Misses {
			missed += c
		}
		if r.N != 6 || r.Leak+missed != r.N || r.LeakLo > r.LeakHi {
			t.Errorf("%s: %d runs, %d leaks, %d misses %v, range %.2f–%.2f; want 6 runs that are leaks or misses", r.Design.Name(), r.N, r.Leak, missed, r.Misses, r.LeakLo, r.LeakHi)
		}
	}
}
