package verdict

// tRow is Student's t at one quantile for df degrees of freedom.
type tRow struct {
	df int
	t  float64
}

// tTable is Student's t at one quantile, tabulated by rising degrees of
// freedom from 1, and the normal's quantile past the last row.
type tTable struct {
	rows   []tRow
	normal float64
}

// at is the table's t for df >= 1 degrees of freedom, interpolated in
// 1/df between the tabulated values.
func (tb tTable) at(df int) float64 {
	for i, c := range tb.rows {
		if df == c.df {
			return c.t
		}
		if df < c.df {
			p := tb.rows[i-1]
			f := (1/float64(p.df) - 1/float64(df)) / (1/float64(p.df) - 1/float64(c.df))
			return p.t + f*(c.t-p.t)
		}
	}
	return tb.normal
}
