package load

// StopTargetDied is Summary.StoppedBy when the runner stopped the load
// because the target died and was not back within its grace period.
const StopTargetDied = "target_died"

// stoppedText says why the load stopped, for the text report.
func (s *Summary) stoppedText() string {
	if s.StoppedBy != StopTargetDied {
		return s.StoppedBy
	}
	if s.StopDetail == "" {
		return "the target died"
	}
	return "the target died (" + s.StopDetail + ")"
}
