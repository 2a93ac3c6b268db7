// Package units prints figures the way soakd shows them everywhere (the
// run page, the alerts): with their unit, three significant digits, never
// in scientific notation, bytes in KiB to TiB.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Sig3 formats v with at most three significant digits in plain notation
// (large values keep all their integer digits, trailing zeros go, as %g
// would drop them); "-0" becomes "0".
func Sig3(v float64) string {
	dec := Decimals(v)
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if dec > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// Decimals is how many decimals give v three significant digits: none
// from 100 up (and for 0), at most 12.
func Decimals(v float64) int {
	a := math.Abs(v)
	if a == 0 || a >= 100 {
		return 0
	}
	return min(12, 2-int(math.Floor(math.Log10(a))))
}

// Scale picks the unit of a figure of magnitude a: for bytes the largest
// of TiB, GiB, MiB and KiB it reaches, else B; any other unit as it is.
// The figure is divided by the returned size.
func Scale(a float64, unit string) (size float64, name string) {
	if unit != "bytes" {
		return 1, unit
	}
	for _, u := range []struct {
		size float64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if a >= u.size {
			return u.size, u.name
		}
	}
	return 1, "B"
}

// Amount formats v in its unit: "1.46 GiB", "650346 fds", "0.00501 fds";
// a figure without a unit is the number alone.
func Amount(v float64, unit string) string {
	size, name := Scale(math.Abs(v), unit)
	if name == "" {
		return Sig3(v)
	}
	return Sig3(v/size) + " " + name
}

// Range formats an interval in one unit, the one its larger bound takes:
// "0.98 – 1.02 KiB", never "1e+03 B – 1.02 KiB".
func Range(lo, hi float64, unit string) string {
	size, name := Scale(max(math.Abs(lo), math.Abs(hi)), unit)
	return Sig3(lo/size) + " – " + Sig3(hi/size) + " " + name
}

// Group writes v rounded to an integer in groups of three, e.g.
// "300 000".
func Group(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}
