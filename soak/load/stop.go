package load

// StopTargetDied is Summary.StoppedBy when the runner stopped the load
// because the target died and was not back within its grace period.
const StopTargetDied = "target_died"

// StoppedText says why the load stopped, for the reports: StoppedBy, or
// with StopTargetDied, how the target died.
func (s *Summary) StoppedText() string {
	if s.StoppedBy != StopTargetDied {
		return s.StoppedBy
	}
	if s.StopDetail == "" {
		return "the target died"
	}
	return "the target died (" + s.StopDetail + ")"
}
