package verdict

import (
	"math"
	"testing"
)

// Both t tables read through one interpolation: exact at a tabulated
// df, close to Student's t between them (df 11: 2.201 and 3.106), the
// normal's past the last row.
func TestTTables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		at    func(int) float64
		table tTable
		df11  float64
	}{
		{"t975", t975, tTable975, 2.201},
		{"tQuantile005", tQuantile005, tCritical005, 3.106},
	} {
		for _, r := range tc.table.rows {
			if got := tc.at(r.df); got != r.t {
				t.Errorf("%s(%d) = %g; want the table's %g", tc.name, r.df, got, r.t)
			}
		}
		if got := tc.at(11); math.Abs(got-tc.df11) > 0.005 {
			t.Errorf("%s(11) = %.4f; want %.3f ± 0.005", tc.name, got, tc.df11)
		}
		if got := tc.at(1000); got != tc.table.normal {
			t.Errorf("%s(1000) = %g; want the normal's %g", tc.name, got, tc.table.normal)
		}
	}
	if got := t975(0); got != 12.706 {
		t.Errorf("t975(0) = %g; want t975(1), 12.706", got)
	}
	if got := tQuantile005(0); !math.IsInf(got, 1) {
		t.Errorf("tQuantile005(0) = %g; want +Inf", got)
	}
}
