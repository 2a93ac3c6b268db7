package verdict

// Overall verdicts of a run.
const (
	OverallLeak         = "leak"
	OverallClean        = "clean"
	OverallInconclusive = "inconclusive"
	// OverallFailing: the target's requests failed (see AnalyzeHealth).
	// It ranks with leak and over it: a run that is failing and leaking
	// is "failing", and its leaks stay in the resources.
	OverallFailing = "failing"
)

// Overall is "leak" if any resource leaks, "clean" if every resource is
// stable or a plateau, and "inconclusive" otherwise, including when there
// are no resources at all.
func Overall(rs map[string]Resource) string {
	if len(rs) == 0 {
		return OverallInconclusive
	}
	clean := true
	for _, r := range rs {
		if r.Verdict == Leak {
			return OverallLeak
		}
		clean = clean && Settled(r.Verdict)
	}
	if clean {
		return OverallClean
	}
	return OverallInconclusive
}

// WithHealth is the run's verdict once its requests are judged: "failing"
// when h is, else overall unchanged (h may be nil: no load was judged).
func WithHealth(overall string, h *Health) string {
	if h != nil && h.Verdict == HealthFailing {
		return OverallFailing
	}
	return overall
}
