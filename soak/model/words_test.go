package model

import "testing"

// TestP99DriftWords: a p99 slope from a soak shorter than an hour is
// worded over the soak, not projected to an hour ("+5857.490 ms/h" from
// a 40 s soak); from an hour on, per hour.
func TestP99DriftWords(t *testing.T) {
	for _, tt := range []struct {
		perHour, soak float64
		want          string
	}{
		{5.857490, 40, "+65.1 ms over the soak's 40 s"},
		{0.0009, 600, "+0.15 ms over the soak's 10.0 min"},
		{-0.0036, 1800, "-1.8 ms over the soak's 30.0 min"},
		{0.012, 7200, "+12 ms/h"},
	} {
		if got := p99Drift(tt.perHour, tt.soak); got != tt.want {
			t.Errorf("p99Drift(%g s/h, %g s) = %q; want %q", tt.perHour, tt.soak, got, tt.want)
		}
	}
}
