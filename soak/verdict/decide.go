package verdict

// decision is a verdict and why.
type decision struct {
	verdict string
	why     string  // the reason's tail, see reason
	more    float64 // extra requests that would settle an inconclusive one
}

// Reasons a decision was taken.
const (
	whyLeak     = "leak"
	whyReleased = "released"
	whyPlateau  = "plateau"
	whyFlat     = "flat"
	whyNoisy    = "noisy"
	whyShort    = "short"
	whyUnsure   = "unsure-last-third"
)

// decide applies the rules in AnalyzeResource's doc comment.
func decide(f fit, th Thresholds, rel *bool) decision {
	sig := f.significant(th.Alpha)
	clears := sig && f.whole.Lo > th.MinPerRequest
	switch {
	case clears && f.fittedGrowth() > th.MinTotal && f.continued():
		if rel != nil && *rel {
			return decision{verdict: Stable, why: whyReleased}
		}
		return decision{verdict: Leak, why: whyLeak}
	case f.grew(th.Alpha) && f.end-f.start > th.MinTotal && f.flattened(th.MinPerRequest):
		return decision{verdict: Plateau, why: whyPlateau}
	case f.whole.Hi < th.MinPerRequest:
		return decision{verdict: Stable, why: whyFlat}
	case clears && f.fittedGrowth() <= th.MinTotal:
		more := th.MinTotal/f.whole.Slope - f.span
		return decision{verdict: Inconclusive, why: whyShort, more: more}
	case clears:
		h := (f.last.Hi - f.last.Lo) / 2
		need := abs(f.last.Slope - keepFraction*f.whole.Slope)
		return decision{verdict: Inconclusive, why: whyUnsure, more: moreRequests(f.span, h, need)}
	}
	need := abs(f.whole.Slope - th.MinPerRequest)
	return decision{verdict: Inconclusive, why: whyNoisy, more: moreRequests(f.span, f.halfWidth(), need)}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
