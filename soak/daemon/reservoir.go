package daemon

import (
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// DefaultReservoir is how many records a running run keeps in memory
// for its live analysis at most: enough for the verdict's 32 to 128 bins
// to hold several points each, few enough that a run of any length costs
// the same memory (about 0.6 MiB for one process; the members of a
// larger tree add their share).
const DefaultReservoir = 1024

// reservoir is a running run's records for the live analysis, in bounded
// memory: the full series goes to the store as it is taken, and the
// reservoir keeps at most max records plus the newest. It keeps one record
// of every stride in a row, and when it holds max of them it merges each
// adjacent pair into one and doubles the stride, so it stays an
// evenly-spaced thinning of the whole run, whatever its length.
//
// Of each stride it keeps the record with the lowest RSS (an alive one
// before a dead one): the verdict fits the troughs of the GC cycles (the
// envelope of each bin's lowest points), and the lowest of a stride is the
// one that envelope would pick. The counters (requests, CPU time) are
// cumulative, so any record of a stride carries them. The live analysis
// is therefore close to, not the same as, the final one, which reads the
// full series back from the store.
type reservoir struct {
	max    int
	stride int
	kept   []model.Record // one per stride, in time order; never changed once appended
	group  model.Record   // the record kept of the stride being filled
	groupN int            // records seen of that stride
	newest model.Record   // the last record appended
	n      int            // records appended in all
	soakN  int            // of them in the soak phase
	// loadStart is the elapsed seconds at the last baseline record (the
	// load's start), for the progress.
	loadStart float64
}

// newReservoir returns a reservoir of at most size records (at least 2);
// the zero reservoir keeps DefaultReservoir.
func newReservoir(size int) *reservoir {
	return &reservoir{max: max(size, 2)}
}

// lower reports whether a is the better record of a stride to keep.
func lower(a, b *model.Record) bool {
	if a.Alive != b.Alive {
		return a.Alive
	}
	return a.RSS < b.RSS
}

// add appends a record.
func (s *reservoir) add(r model.Record) {
	if s.max == 0 {
		s.max = DefaultReservoir
	}
	if s.stride == 0 {
		s.stride, s.kept = 1, make([]model.Record, 0, s.max)
	}
	s.n++
	switch r.Phase {
	case verdict.Soak:
		s.soakN++
	case verdict.Baseline:
		s.loadStart = r.Elapsed
	}
	s.newest = r
	if s.groupN == 0 || lower(&r, &s.group) {
		s.group = r
	}
	s.groupN++
	if s.groupN < s.stride {
		return
	}
	s.kept = append(s.kept, s.group)
	s.group, s.groupN = model.Record{}, 0
	if len(s.kept) >= s.max {
		s.halve()
	}
}

// halve merges adjacent pairs of the kept records, into a new array so
// that the snapshots handed out stay as they were.
func (s *reservoir) halve() {
	out := make([]model.Record, 0, s.max)
	for i := 0; i+1 < len(s.kept); i += 2 {
		a, b := &s.kept[i], &s.kept[i+1]
		if lower(b, a) {
			a = b
		}
		out = append(out, *a)
	}
	if len(s.kept)%2 == 1 { // an odd one out starts the next stride
		s.group, s.groupN = s.kept[len(s.kept)-1], s.stride
	}
	s.kept = out
	s.stride *= 2
}

// snapshot returns the records to analyse: those kept, then the one kept
// so far of the stride being filled, then the newest record when it is
// neither. It is a new slice, safe to use while the run goes on.
func (s *reservoir) snapshot() []model.Record {
	out := make([]model.Record, len(s.kept), len(s.kept)+2)
	copy(out, s.kept)
	if s.groupN > 0 {
		out = append(out, s.group)
	}
	if n := len(out); s.n > 0 && (n == 0 || out[n-1].Time != s.newest.Time || out[n-1].Elapsed != s.newest.Elapsed) {
		out = append(out, s.newest)
	}
	return out
}

// held is the number of records the reservoir holds.
func (s *reservoir) held() int {
	n := len(s.kept)
	if s.groupN > 0 {
		n++
	}
	return n + 1 // the newest
}
