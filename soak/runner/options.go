// Package runner runs a soak: it drives the load engine, samples the target's
// process tree on a fixed cadence, splits the run into warm-up, soak and
// cool-down phases, and turns the samples into a report with verdicts. It
// wires the leaf packages (soak/load, probes, soak/verdict) and touches no
// signals, flags or environment: cmd/soakd and the daemon call Run.
package runner

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/sites"
	"github.com/soakd/soakd/soak/verdict"
)

// Warmup says how much of the start of a run is excluded from the fits. At
// most one of its fields is set; the zero value means the default: 10 % of
// the planned run (of Duration, at most 30 minutes, or of Requests; with
// both, the run stops at whichever comes first, and so does the warm-up),
// and the first 60 s when the run has no bound.
type Warmup struct {
	Requests uint64
	Duration time.Duration
	Fraction float64 // of the planned run, 0 < f < 1
	None     bool    // no warm-up at all
}

// Options configure one soak run.
type Options struct {
	Load load.Options
	// Target finds the process tree: TargetSpec's probes.Spec, checked,
	// with URL set to the first endpoint's.
	Target probes.Spec
	// NoProbe runs the load alone: no target is sampled and no resource
	// verdicts are made.
	NoProbe bool
	// FollowUpstreams samples, with the tree, the local servers it
	// forwards to (a reverse proxy's backends) when they are first seen
	// before the soak (see upstreamWatch); without it they are named only.
	FollowUpstreams bool
	Sampler         probes.SamplerOptions
	// Remote, when it names a source, samples the target through its
	// metrics (its own endpoint or a Prometheus server) instead of /proc.
	// Target then only starts it (Exec), if anything.
	Remote remote.Config
	// Interval is the sampling cadence; zero paces it to the run (see
	// pacer): about 300 samples over the soak, no shorter than the probe's
	// cost allows (2 % of a core) and no longer than 1 s. The load's
	// progress lines keep their own interval, Load.Interval (default 1 s).
	Interval time.Duration
	// FixedMix keeps the targets file's mix all run long. By default a
	// load over two or more endpoints favours each in turn, in blocks of
	// samples (see mixer), so that the report can split each resource's
	// growth between the endpoints.
	FixedMix bool

	// Baseline is the idle phase sampled before the load starts, the level
	// that "released" is judged against: zero is DefaultBaseline, a
	// negative value skips it.
	Baseline time.Duration
	Warmup   Warmup
	Cooldown time.Duration // sampling goes on this long after the load stops
	// DeadGrace is how long the target may be gone during the load: when
	// it is not back (as a new incarnation) within it, the load stops and
	// the report says the target died. Zero is DefaultDeadGrace; negative
	// never stops the load.
	DeadGrace time.Duration

	Memory   verdict.Thresholds // zero value = verdict.MemoryThresholds
	FDs      verdict.Thresholds // zero value = verdict.FDThresholds
	MemLimit uint64             // bytes; 0 = the cgroup's memory.max, if any
	// Health says when failed requests make the run failing; zero fields
	// take verdict.DefaultHealth's.
	Health verdict.HealthThresholds
	// UntilDecided stops the load as soon as every part of the run is
	// decided (see until): the load's Duration or Requests is then the
	// most it may take, and one of them must be set.
	UntilDecided bool
	// UntilMinSoak is the soak before which no look decides: zero is
	// verdict.MinDecideSeconds, negative none (for tests of the
	// mechanics on short runs).
	UntilMinSoak time.Duration

	// Sites says where to look for allocation sites (--pprof,
	// --snapshot-cmd); see package sites.
	Sites sites.Options
	// NoWhere reads no mappings (smaps_rollup alone, as before) and takes
	// no allocation-site snapshots.
	NoWhere bool
	// EvidenceLimit bounds the snapshot files a run keeps (0 =
	// sites.DefaultEvidenceLimit, 8 MiB).
	EvidenceLimit int64
	// NodeInspect is a Node target's inspector, HOST:PORT on loopback
	// (node --inspect=127.0.0.1:PORT): under the designed mix soakd reads
	// the live heap there at each block's end (a forced collection) and
	// splits the memory's growth between the endpoints on it. "": none
	// (never found by itself: the inspector grants code execution).
	NodeInspect string

	// OutDir, when set, receives samples.csv as the run goes, and
	// report.json and report.txt at the end.
	OutDir string
	// Progress receives the live progress lines; nil = none.
	Progress io.Writer
	Log      *zap.Logger
	// Spool, when set, takes every sample as it is taken and gives the
	// series back for the final analysis (see Spool); nil spools to
	// OutDir's samples.csv and procs.csv, or to temporary files.
	Spool Spool
	// OnRecord, when set, is called with every sample as it is taken.
	OnRecord func(model.Record)
	// Now is the clock; nil = time.Now.
	Now func() time.Time

	smapsByRequests bool // setDefaults: pace PSS/USS from the throughput
}

// DefaultBaseline is the idle phase sampled before the load by default.
const DefaultBaseline = 3 * time.Second

// SmapsPace is the PSS/USS cadence of a run whose load lasts d: about 30
// reads of smaps_rollup over it, no closer than 2 s (each read takes the
// target's mmap lock) and no further apart than 30 s, the default of a
// run with no duration. A 6-minute run reads PSS every 12 s, where a fixed
// 30 s left too few points to decide.
func SmapsPace(d time.Duration) time.Duration {
	const most = 30 * time.Second
	if d <= 0 {
		return most
	}
	return min(max(d/30, 2*time.Second), most)
}

// DefaultDeadGrace is how long a target may be gone during the load
// before the load stops.
const DefaultDeadGrace = 10 * time.Second

// setDefaults fills the fields a caller may leave zero. The options are
// checked where they are written: Spec.Check for the CLI and the config.
func (o *Options) setDefaults() {
	if o.Baseline == 0 {
		o.Baseline = DefaultBaseline
	}
	if o.DeadGrace == 0 {
		o.DeadGrace = DefaultDeadGrace
	}
	if o.Sampler.SmapsInterval == 0 {
		o.Sampler.SmapsInterval = SmapsPace(o.Load.Duration)
		// A run bounded by requests only is paced once its throughput
		// is known (pacer.smaps).
		o.smapsByRequests = o.Load.Duration == 0 && o.Load.Requests > 0
	}
	if !o.NoWhere && !o.NoProbe && !o.Remote.Enabled() {
		o.Sampler.Mappings = true
	}
	if o.Memory == (verdict.Thresholds{}) {
		o.Memory = verdict.MemoryThresholds
	}
	if o.FDs == (verdict.Thresholds{}) {
		o.FDs = verdict.FDThresholds
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// baseline is the idle phase's length; 0 when it is skipped or nothing is
// sampled.
func (o *Options) baseline() time.Duration {
	if o.NoProbe || o.Baseline < 0 {
		return 0
	}
	return o.Baseline
}

// warmupEnd returns the request count and the elapsed time that end the
// warm-up; 0 is no bound. A sample is past the warm-up once it reaches
// either bound that is set (see runner.phase).
func (o *Options) warmupEnd() (uint64, time.Duration) {
	w := o.Warmup
	switch {
	case w.None:
		return 0, 0
	case w.Requests > 0:
		return w.Requests, 0
	case w.Duration > 0:
		return 0, w.Duration
	}
	f := w.Fraction
	if f == 0 {
		f = 0.10
	}
	var req uint64
	var dur time.Duration
	if o.Load.Duration > 0 {
		dur = min(time.Duration(f*float64(o.Load.Duration)), 30*time.Minute)
	}
	if o.Load.Requests > 0 {
		req = uint64(f * float64(o.Load.Requests))
	}
	if req == 0 && dur == 0 {
		dur = 60 * time.Second
	}
	return req, dur
}

// ParseWarmup reads a warm-up: N requests, a duration, a percentage, or 0.
func ParseWarmup(s string) (Warmup, error) {
	bad := fmt.Errorf("%q: want a request count (5000), a duration (30s), a share of the run (10%%), or 0", s)
	switch {
	case s == "0" || s == "none":
		return Warmup{None: true}, nil
	case strings.HasSuffix(s, "%"):
		p, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || p <= 0 || p >= 100 {
			return Warmup{}, bad
		}
		return Warmup{Fraction: p / 100}, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return Warmup{Requests: n}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return Warmup{Duration: d}, nil
	}
	return Warmup{}, bad
}
