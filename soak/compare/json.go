package compare

import (
	"encoding/json"
	"math"
)

// jsonMetric is Metric's JSON form: a figure that is not a finite number
// (no interval, no old value) is null.
type jsonMetric struct {
	Unit           string     `json:"unit"`
	Old            *float64   `json:"old"`
	New            *float64   `json:"new"`
	Difference     *float64   `json:"difference"`
	CI95           []*float64 `json:"ci95"`
	Relative       bool       `json:"relative"`
	Margin         float64    `json:"margin"`
	MarginOf       string     `json:"margin_of,omitempty"`
	MarginBy       string     `json:"margin_by,omitempty"`
	Verdict        string     `json:"verdict"`
	Reason         string     `json:"reason,omitempty"`
	HigherIsBetter bool       `json:"higher_is_better,omitempty"`
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes the metric with null for a figure that is not a
// finite number.
func (m Metric) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonMetric{Unit: m.Unit, Old: num(m.Old), New: num(m.New), Difference: num(m.Difference),
		CI95: []*float64{num(m.CI95[0]), num(m.CI95[1])}, Relative: m.Relative, Margin: m.Margin, MarginOf: m.MarginOf, MarginBy: m.MarginBy,
		Verdict: m.Verdict, Reason: m.Reason, HigherIsBetter: m.HigherIsBetter})
}

// UnmarshalJSON reads what MarshalJSON writes, null as NaN.
func (m *Metric) UnmarshalJSON(b []byte) error {
	var j jsonMetric
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Metric{Unit: j.Unit, Old: val(j.Old), New: val(j.New), Difference: val(j.Difference),
		CI95: [2]float64{math.NaN(), math.NaN()}, Relative: j.Relative, Margin: j.Margin, MarginOf: j.MarginOf, MarginBy: j.MarginBy, Verdict: j.Verdict,
		Reason: j.Reason, HigherIsBetter: j.HigherIsBetter}
	if len(j.CI95) == 2 {
		m.CI95 = [2]float64{val(j.CI95[0]), val(j.CI95[1])}
	}
	return nil
}
