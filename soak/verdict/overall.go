package verdict

// Overall verdicts of a run.
const (
	OverallLeak         = "leak"
	OverallClean        = "clean"
	OverallInconclusive = "inconclusive"
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
		switch r.Verdict {
		case Leak:
			return OverallLeak
		case Stable, Plateau:
		default:
			clean = false
		}
	}
	if clean {
		return OverallClean
	}
	return OverallInconclusive
}
