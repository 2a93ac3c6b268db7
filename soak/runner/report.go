package runner

import (
	"fmt"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
	"go.uber.org/zap"
)

// report reads the run's series back from the spool and analyses it.
func (r *runner) report(sum *load.Summary, tgt *probes.Target, loadEnd time.Time) (*model.Report, error) {
	recs := r.final // a remote source's own samples (fetchRemote)
	if recs == nil {
		var err error
		if recs, err = r.spool.Records(); err != nil {
			return nil, fmt.Errorf("reading the run's samples back for the analysis: %w", err)
		}
	}
	if r.final == nil && len(recs) != r.samples {
		r.o.Log.Warn("the analysis covers only the samples stored: the others failed to be written (see the errors above)",
			zap.Int("stored", len(recs)), zap.Int("taken", r.samples))
	}
	ao := r.analysisOptions()
	ao.Share = r.until.reportShare()
	ao.Stalls = r.stall.outages(r.start, loadEnd)
	var ti model.TargetInfo
	if tgt != nil {
		ti = model.TargetInfo{Description: tgt.Describe(), Probed: true, Exit: tgt.Exit()}
		if r.died != nil {
			ti.DiedAt, ti.DeadGraceSeconds = r.died, r.o.DeadGrace.Seconds()
		}
		ti.Unsampled = r.unsampled
		ti.Upstreams = r.ups.upstreams()
		ti.Collector = r.collector
	}
	if r.remote != nil {
		ti = model.TargetInfo{Description: r.remote.Describe(), Probed: true}
		if tgt != nil {
			ti.Description += "; started as " + tgt.Describe()
			ti.Exit = tgt.Exit()
		}
	}
	if ti.Probed && r.remote == nil {
		ti.HostMemoryBytes, _ = probes.HostMemory("/proc") // 0 when unreadable: the report says less
	}
	rep := analysis.NewReport(r.ups.analysisRecords(recs), sum, ti, ao)
	r.stops.fill(rep.Target.Stopped, r.eng.Counters().Timeouts)
	if r.remote != nil {
		r.remoteInfo(rep)
	}
	rep.Started, rep.Ended = r.start, r.o.Now()
	r.mu.Lock()
	rep.LatencyBlocks = r.latency.Blocks()
	r.mu.Unlock()
	rep.Sampling = r.pace.sampling(rep.Ended.Sub(rep.Started).Seconds())
	rep.Phases.CooldownSeconds = 0
	if n := len(recs); n > 0 && recs[n-1].Phase == verdict.Cooldown {
		rep.Phases.CooldownSeconds = recs[n-1].Elapsed - loadEnd.Sub(r.start).Seconds()
	}
	return rep, nil
}

// analysisOptions are the run's analysis options.
func (r *runner) analysisOptions() analysis.Options {
	ao := analysis.Options{Memory: r.o.Memory, FDs: r.o.FDs, MemLimit: r.o.MemLimit, Health: r.o.Health, Collector: r.collector,
		LiveHeap: r.liveSeries()}
	ao.Health.Timeout = r.eng.Options().Timeout.Seconds()
	ao.Stalls = r.stall.outages(r.start, r.o.Now()) // a look's; the report's ends at the load's end
	if r.o.Load.Rate == 0 {
		ao.Concurrency = max(r.o.Load.Concurrency, 1)
	}
	return ao
}
