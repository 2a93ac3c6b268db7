package runner

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/soakd/soakd/soak/load"
)

// tally counts what the runner needs of the load's results beyond the
// engine's totals: every request completed while the target was gone,
// which is counted apart from the soak (see gone.go).
type tally struct {
	gone atomic.Bool // the target is gone now (set by watchDeath)

	mu        sync.Mutex // guards whileGone
	whileGone goneCount
}

// goneCount is the accounting of the requests completed while the target
// was gone, in the shape of load.Summary's.
type goneCount struct {
	requests, errors, successes uint64
	causes                      map[string]uint64
	classes                     map[string]uint64
}

// observe is the load's OnResult hook. A result while the target is
// running costs an atomic load.
func (t *tally) observe(res load.Result) {
	if !t.gone.Load() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g := &t.whileGone
	g.requests++
	if res.Cause == "" {
		g.successes++
	} else {
		g.errors++
		if g.causes == nil {
			g.causes = map[string]uint64{}
		}
		g.causes[res.Cause]++
	}
	if res.Status > 0 {
		if g.classes == nil {
			g.classes = map[string]uint64{}
		}
		g.classes[strconv.Itoa(res.Status/100)+"xx"]++
	}
}

// goneTotals returns the requests and errors completed while the target
// was gone so far.
func (t *tally) goneTotals() (requests, errors uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.whileGone.requests, t.whileGone.errors
}

// settle takes the requests completed while the target was gone out of
// the load's summary and counts them in AttemptsWhileGone instead.
func (t *tally) settle(s *load.Summary) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.whileGone
	if g.requests == 0 {
		return
	}
	s.AttemptsWhileGone = g.requests
	s.Requests -= min(g.requests, s.Requests)
	s.Errors -= min(g.errors, s.Errors)
	s.Successes -= min(g.successes, s.Successes)
	subtract(s.ErrorsByCause, g.causes)
	for c := range s.ErrorTexts {
		if s.ErrorsByCause[c] == 0 {
			delete(s.ErrorTexts, c) // every error of the cause came while the target was gone
		}
	}
	subtract(s.StatusClasses, g.classes)
	if s.DurationSeconds > 0 {
		s.RPS = float64(s.Requests) / s.DurationSeconds
	}
}

// subtract takes b's counts out of a's, dropping the keys that reach 0.
func subtract(a, b map[string]uint64) {
	for k, n := range b {
		if a[k] <= n {
			delete(a, k)
			continue
		}
		a[k] -= n
	}
}
