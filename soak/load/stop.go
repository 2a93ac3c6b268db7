package load

// StopTargetDied is Summary.StoppedBy when the runner stopped the load
// because the target died and was not back within its grace period.
const StopTargetDied = "target_died"

// StopDecided is Summary.StoppedBy when the runner stopped the load
// because every part of the run was decided (until-decided); StopDetail
// then says after how long, e.g. "after 1.5 min".
const StopDecided = "decided"

// StoppedText says why the load stopped, for the reports: StoppedBy, or
// with StopTargetDied, how the target died, or with StopDecided, after
// how long.
func (s *Summary) StoppedText() string {
	if s.StoppedBy == StopDecided && s.StopDetail != "" {
		return s.StoppedBy + " " + s.StopDetail
	}
	if s.StoppedBy != StopTargetDied {
		return s.StoppedBy
	}
	if s.StopDetail == "" {
		return "the target died"
	}
	return "the target died (" + s.StopDetail + ")"
}
