package remote

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
)

// Source is a remote probe source. Sample never fails the run: a scrape or
// query that fails gives a sample with Alive false and a note.
type Source interface {
	probes.Source
	// Describe names the source for the report, without credentials.
	Describe() string
	// Absent says, for each resource the source cannot see, why.
	Absent() map[string]string
	// Notes are what went wrong or changed during the run (failed
	// scrapes, restarts, counter resets, series that disappeared), for
	// the report.
	Notes() []string
}

// Fetcher is a source that holds the run's samples itself and gives them
// at the end, at its own resolution (a Prometheus server).
type Fetcher interface {
	Fetch(ctx context.Context, start, end time.Time) ([]probes.Sample, error)
}

// Open checks cfg, reaches its source once and returns it. The error says
// what is wrong: the endpoint is down, the selector matches nothing or
// many, the credentials are refused.
func Open(ctx context.Context, cfg Config, log *zap.Logger) (Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.MetricsURL != "" {
		return openScrape(ctx, cfg, log)
	}
	return openProm(ctx, cfg, log)
}

// notes is a run's list of remarks, each kept once; the first maxNotes.
type notes struct {
	mu   sync.Mutex // guards all below
	list []string
	seen map[string]int // remark → index in list
	n    map[string]int // remark → times seen
}

const maxNotes = 20

func (n *notes) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen == nil {
		n.seen, n.n = map[string]int{}, map[string]int{}
	}
	n.n[s]++
	if _, ok := n.seen[s]; ok || len(n.list) >= maxNotes {
		return
	}
	n.seen[s] = len(n.list)
	n.list = append(n.list, s)
}

func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.list))
	for i, s := range n.list {
		out[i] = s
		if c := n.n[s]; c > 1 {
			out[i] = fmt.Sprintf("%s (%d times)", s, c)
		}
	}
	return out
}

// liveSamples turns each reading a source takes now into a sample. A
// failed reading gives an absent sample (Alive false) and a note; the first
// failure of a run of them is logged, and the first answer after one.
type liveSamples struct {
	b       *builder
	extras  []Extra
	log     *zap.Logger
	what    string // what a reading is, for the note: "scrape", "live query"
	failing bool   // the last reading failed
}

// sample makes the sample of the reading snap (or err) taken at t; source
// names the source for the log.
func (l *liveSamples) sample(t time.Time, snap snapshot, err error, source string) probes.Sample {
	if err != nil {
		if !l.failing {
			l.log.Warn("remote probe: "+l.what+" failed; the samples are absent until it answers", zap.String("source", source), zap.Error(err))
		}
		l.failing = true
		l.b.notes.add(l.what + " failed: " + err.Error())
		return l.b.sample(t, reading{})
	}
	if l.failing {
		l.log.Info("remote probe: the source answers again", zap.String("source", source))
	}
	l.failing = false
	r, amb := read(snap, l.b.fam, l.extras)
	for _, a := range amb {
		l.b.notes.add(a)
	}
	return l.b.sample(t, r)
}
