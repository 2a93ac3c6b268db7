package runner

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// upstreamer is the part of probes.Sampler that finds and follows the
// tree's upstreams.
type upstreamer interface {
	Upstreams(ctx context.Context) []probes.Upstream
	Follow(probes.Upstream) bool
}

var _ upstreamer = (*probes.Sampler)(nil)

// How often the tree's connections are read for upstreams: a proxy opens
// them lazily, at its first requests, and with HTTP/1.0 to its backend
// (nginx's default) holds each only while a request is in flight, a
// millisecond or so, so a look catches it only while it is open. The
// baseline and the warm-up look at every sample, the soak, which only
// names what it finds, every half second. A look with nothing to find
// costs one sock_diag dump of the TCP tables (probes.Sampler.Upstreams);
// one that sees a connection to a local server not the tree's own reads
// the sampled processes' fds as well.
const (
	upstreamLookWarm time.Duration = 0
	upstreamLookSoak               = 500 * time.Millisecond
)

// upstreamWatch names the local servers the sampled tree forwards to and,
// with Options.FollowUpstreams, samples them with the tree when they are
// first seen before the soak. One seen in the soak is named, not
// followed: its level joining mid-soak would read as growth.
type upstreamWatch struct {
	src      upstreamer
	follow   bool
	log      *zap.Logger
	last     time.Time
	found    []model.Upstream
	baseline bool // a baseline sample was taken
	// baselineStale says an upstream was followed after baseline samples
	// were taken: their level lacks it, so the analysis leaves them out.
	baselineStale bool
}

// newUpstreamWatch returns nil when the run samples no local tree.
func newUpstreamWatch(src probes.Source, o *Options) *upstreamWatch {
	u, ok := src.(upstreamer)
	if !ok || o.Remote.Enabled() {
		return nil
	}
	return &upstreamWatch{src: u, follow: o.FollowUpstreams, log: o.Log}
}

// observe looks for upstreams after rec was taken, when a look is due.
func (w *upstreamWatch) observe(ctx context.Context, rec model.Record) {
	if w == nil {
		return
	}
	w.baseline = w.baseline || rec.Phase == verdict.Baseline
	if !rec.Alive || rec.Phase == verdict.Cooldown {
		return
	}
	every := upstreamLookWarm
	if rec.Phase == verdict.Soak {
		every = upstreamLookSoak
	}
	if !w.last.IsZero() && !rec.Time.After(w.last.Add(every-every/10)) { // at most one look a record
		return
	}
	w.last = rec.Time
	for _, u := range w.src.Upstreams(ctx) {
		if w.known(u) {
			continue
		}
		w.add(u, rec)
	}
}

func (w *upstreamWatch) known(u probes.Upstream) bool {
	for _, k := range w.found {
		if k.Addr == u.Addr && k.PID == u.PID && k.Start == u.Start {
			return true
		}
	}
	return false
}

// add records a new upstream and follows it when asked to and still in
// time.
func (w *upstreamWatch) add(u probes.Upstream, rec model.Record) {
	m := model.Upstream{Upstream: u, SeenSeconds: rec.Elapsed, SeenPhase: model.PhaseName(rec.Phase)}
	switch {
	case !w.follow:
	case u.PID == 0:
		m.Note = "its server is not known, so it cannot be followed"
	case rec.Phase == verdict.Soak:
		m.Note = fmt.Sprintf("first seen in the soak, at %.1f s: not followed, as its level joining mid-soak would read as growth; lengthen the warm-up so that the proxy opens its connections in it", rec.Elapsed)
	default:
		m.Followed = w.alreadyFollowed(u) || w.src.Follow(u)
		if m.Followed && w.baseline {
			w.baselineStale = true
			m.Note = "the baseline, sampled without it, is left out of the analysis"
		}
	}
	w.found = append(w.found, m)
	if m.Followed {
		w.log.Info("following an upstream: its processes are sampled with the tree from now on",
			zap.String("upstream", u.String()), zap.Float64("elapsed_seconds", rec.Elapsed), zap.String("phase", m.SeenPhase))
		return
	}
	w.log.Warn("the sampled tree forwards to a local server that is not sampled: its resources are in no verdict; "+m.Advice(),
		zap.String("upstream", u.String()), zap.String("note", m.Note))
}

// alreadyFollowed says whether u's server is followed under another
// address.
func (w *upstreamWatch) alreadyFollowed(u probes.Upstream) bool {
	for _, k := range w.found {
		if k.Followed && k.PID == u.PID && k.Start == u.Start {
			return true
		}
	}
	return false
}

// upstreams returns what the run found, nil when nothing.
func (w *upstreamWatch) upstreams() []model.Upstream {
	if w == nil {
		return nil
	}
	return w.found
}

// analysisRecords leaves out the baseline's records when an upstream
// joined the sampled set after them (model.BaselineLeftOut, which soakd
// analyze applies from the report).
func (w *upstreamWatch) analysisRecords(recs []model.Record) []model.Record {
	if w == nil || !w.baselineStale {
		return recs
	}
	return model.WithoutBaseline(recs)
}
