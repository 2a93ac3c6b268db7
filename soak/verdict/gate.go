package verdict

// Gate keeps the live analysis' false-alarm budget across repeated looks.
// The daemon re-analyses a running soak every minute, and a test that is
// right 999 times in 1000 on one look fires far more often when it is
// asked hundreds of times on a series that only grows by a minute's
// samples each time, and the first looks see a few minutes of wander that
// no statistic can tell from a trend. So a look counts as a leak only once
// the soak has run MinSoak seconds, and a resource's leak alert changes
// state only when Need consecutive looks agree: it fires after Need looks
// in a row call the resource a leak, and resolves after Need looks in a
// row do not.
// Need was chosen by the simulation in soak/verdict/study (LiveStudy):
// see docs/verdict-study.md. A Gate is not safe for concurrent use.
type Gate struct {
	Need    int
	MinSoak float64 // seconds
	firing  map[string]bool
	streak  map[string]int // consecutive looks that disagree with firing
}

// Defaults of NewGate(0, 0), and LiveAlphaShare: the live looks test at
// this share of the run's Alpha (0.0001 by default), a simple form of
// alpha spending over the hundreds of looks of a night.
const (
	DefaultGateLooks   = 5
	DefaultGateMinSoak = 10 * 60
	LiveAlphaShare     = 0.1
)

// NewGate returns a gate that needs need consecutive looks to change
// state and minSoak seconds of soak before a look counts as a leak
// (DefaultGateLooks and DefaultGateMinSoak when zero or less).
func NewGate(need int, minSoak float64) *Gate {
	if need < 1 {
		need = DefaultGateLooks
	}
	if minSoak <= 0 {
		minSoak = DefaultGateMinSoak
	}
	return &Gate{Need: need, MinSoak: minSoak, firing: map[string]bool{}, streak: map[string]int{}}
}

// Look records one look, taken soakSeconds into the soak, at a resource
// whose verdict is leak or not, and says whether its alert fires now.
func (g *Gate) Look(name string, leak bool, soakSeconds float64) bool {
	leak = leak && soakSeconds >= g.MinSoak
	if leak == g.firing[name] {
		g.streak[name] = 0
		return leak
	}
	g.streak[name]++
	if g.streak[name] >= g.Need {
		g.firing[name], g.streak[name] = leak, 0
	}
	return g.firing[name]
}
