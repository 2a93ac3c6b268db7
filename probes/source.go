package probes

import "os"

// Source is where a run's samples come from. The local /proc Sampler is
// one; probes/remote reads a target's own metrics endpoint or a Prometheus
// server. Sample never fails the run: what the source could not read is
// marked absent in the sample.
type Source interface {
	Sample() Sample
}

var _ Source = (*Sampler)(nil)

// ReadSelf fills s's soakd-own figures (SelfUser, SelfSystem, SelfRSS) from
// /proc/self/stat, for sources that do not read the local /proc otherwise.
// It leaves them zero when the file cannot be read.
func ReadSelf(s *Sample) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	st, err := parseStat(b)
	if err != nil {
		return
	}
	s.SelfUser = float64(st.UTime) / clockTicks
	s.SelfSystem = float64(st.STime) / clockTicks
	s.SelfRSS = st.RSSPages * uint64(os.Getpagesize())
}
