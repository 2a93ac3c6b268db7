package analysis

import (
	"slices"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// Options are what the analysis needs beyond the records.
type Options struct {
	Memory, FDs verdict.Thresholds
	MemLimit    uint64 // bytes; 0 = the cgroup's memory.max, if any
	Concurrency int    // closed-loop workers; 0 in open loop
	CPUs        int    // 0 = runtime.NumCPU()
	// Health: when failed requests make a run failing; zero fields take
	// verdict.DefaultHealth's.
	Health verdict.HealthThresholds
	// Resources limits the analysis to these resources (report names,
	// e.g. "rss"); nil analyses every one the records hold. A samples.csv
	// without a resource's column sets it (see ReadSamples).
	Resources []string
	// Earlier is the evidence of the job's earlier runs of the same
	// process, by resource name (see verdict.Earlier); nil = none.
	Earlier map[string]verdict.Earlier
	// Share is the share of the error budget this analysis spends: an
	// until-decided run's look (verdict.Thresholds.Spent); 0 = 1, the
	// whole budget of a single analysis.
	Share float64
	// Endpoints name the load's endpoints, in the order of the records'
	// per-endpoint counts; nil takes them from the load's summary, and
	// an endpoint left unnamed is called by its samples.csv column.
	Endpoints []string
	// Stalls are the load's stretches in which the target answered
	// nothing for longer than the timeout, on the records' scale; the
	// requests' health counts them as time unavailable.
	Stalls []verdict.Outage
	// Collector names the target's garbage-collected runtime ("Go",
	// "JVM", "Node"; see collectorOf), "" for none: its memory's
	// endpoint split is then not judged (verdict.ResourceOptions.Collected).
	Collector string
	// LiveHeap is the collector's live heap read at each block boundary
	// of the designed mix (model.LiveHeap; the run directory's
	// liveheap.csv): with it, the memory's endpoint split on a
	// garbage-collected runtime is fitted on it
	// (verdict.AttributeLiveHeap) instead of not judged.
	LiveHeap []model.LiveHeap
}

// Analyze fits every resource that the records hold and makes the CPU
// verdict. It is safe to call on a snapshot mid-run (the daemon's live
// analysis does).
func Analyze(recs []model.Record, sum *load.Summary, ao Options) (map[string]verdict.Resource, verdict.CPU) {
	if ao.Memory == (verdict.Thresholds{}) {
		ao.Memory = verdict.MemoryThresholds
	}
	if ao.FDs == (verdict.Thresholds{}) {
		ao.FDs = verdict.FDThresholds
	}
	perHour := soakRequestsPerHour(recs)
	if ao.Endpoints == nil && sum != nil {
		ao.Endpoints = EndpointNames(sum.Endpoints)
	}
	out := map[string]verdict.Resource{}
	// size is the tree's size at the load's start, the level of its RSS
	// (the resource marked Size, first in the table) that its transient
	// rule judged it against (verdict.StartLevel); the memory resources
	// that are parts of it are judged against it too
	// (verdict.ResourceOptions.Size). RSS is analysed for it even when
	// ao.Resources leaves it out, so that a part reads the same alone as
	// beside it.
	var size float64
	for _, res := range append(slices.Clone(model.Resources), model.ExtraResources(recs)...) {
		skip := ao.Resources != nil && !slices.Contains(ao.Resources, res.Name)
		if skip && !res.Size {
			continue
		}
		pts, last, ok := points(recs, res.Value)
		if !ok {
			continue
		}
		opt := verdict.ResourceOptions{Name: res.Name, Setting: res.Setting, Unit: res.Unit, Quantum: res.Quantum,
			Thresholds: ao.thresholds(res.Kind), RequestsPerHour: perHour}
		if res.Kind == model.Memory && res.Type == model.Gauge && !res.Size {
			opt.Size = size
		}
		if res.Type == model.Counter { // judged by its rate, never fitted as a level
			pts, opt.Quantum = model.Rates(pts, res.Quantum)
			opt.Unit += "/request"
		}
		if res.Limit != nil {
			opt.Limit = res.Limit(last, ao.MemLimit)
		}
		if res.Kind == model.Memory {
			opt.Collected = ao.Collector
		}
		if res.Member != nil {
			opt.Lives = lives(recs, res.Member)
		}
		if e, ok := ao.Earlier[res.Name]; ok {
			opt.Earlier = &e
		}
		v := verdict.AnalyzeResource(pts, opt)
		if res.Size {
			size = verdict.StartLevel(v, opt.Earlier)
		}
		if skip {
			continue
		}
		v.Series = res.SeriesOf(last)
		if res.Kind == model.Memory && ao.Collector != "" && len(ao.LiveHeap) > 0 {
			v.Endpoints = attributeLive(ao.LiveHeap, ao.Endpoints, opt)
		} else {
			v.Endpoints = attribute(recs, res.Value, ao.Endpoints, opt)
		}
		verdict.CapEndpoints(v.Endpoints, v)
		out[res.Name] = v
	}
	return out, verdict.AnalyzeCPU(cpuInput(recs, sum, ao))
}

// thresholds are the leak thresholds of a kind of resource, at the
// analysis' share of the error budget.
func (ao Options) thresholds(k model.Kind) verdict.Thresholds {
	th := verdict.CountThresholds
	switch k {
	case model.Memory:
		th = ao.Memory
	case model.Descriptors:
		th = ao.FDs
	}
	return th.Spent(ao.Share)
}

// points extracts one resource's points from the live samples that hold a
// reading of it, and the last such record.
func points(recs []model.Record, value func(model.Record) (float64, bool)) ([]verdict.Point, model.Record, bool) {
	var pts []verdict.Point
	var last model.Record
	for _, r := range recs {
		v, ok := value(r)
		if !ok || !r.Alive {
			continue
		}
		pts = append(pts, verdict.Point{
			Requests: float64(r.Requests), Seconds: r.Elapsed, Value: v,
			Incarnation: r.Incarnation, Phase: r.Phase,
		})
		last = r
	}
	return pts, last, len(pts) > 0
}

// lives follows every process of the tree through the records (in time
// order) by its identity {PID, start time} and returns one series per
// process, in the order the processes first appear, each point holding
// the process's own value and the sample's requests, seconds, incarnation
// and phase. Readings the process did not give (value's ok false) are
// left out, and a process with none has no series.
//
// A long run holds millions of readings and the daemon analyses it every
// minute, so the series are counted first and carved out of one array.
// exiting: a member read while it exits (a zombie: no memory, no fd
// table) says nothing of the growth it carried, and its zero would read
// as a fall.
func exiting(m probes.Member) bool { return m.RSS == 0 && m.NoFDs }

func lives(recs []model.Record, value func(probes.Member) (float64, bool)) [][]verdict.Point {
	type identity struct {
		pid   int32
		start uint64
	}
	index := map[identity]int{}
	var counts []int
	each := func(fn func(r *model.Record, i int, v float64)) {
		for k := range recs {
			r := &recs[k]
			for _, m := range r.Members {
				v, ok := value(m)
				if !ok || exiting(m) {
					continue
				}
				id := identity{m.PID, m.Start}
				i, seen := index[id]
				if !seen {
					i = len(counts)
					index[id] = i
					counts = append(counts, 0)
				}
				fn(r, i, v)
			}
		}
	}
	total := 0
	each(func(_ *model.Record, i int, _ float64) { counts[i]++; total++ })
	out := make([][]verdict.Point, len(counts))
	all := make([]verdict.Point, total)
	for i, n := range counts {
		out[i], all = all[:0:n], all[n:]
	}
	each(func(r *model.Record, i int, v float64) {
		out[i] = append(out[i], verdict.Point{
			Requests: float64(r.Requests), Seconds: r.Elapsed, Value: v,
			Incarnation: r.Incarnation, Phase: r.Phase,
		})
	})
	return out
}

// soakWindow returns the first and last records of the soak phase, or of
// the whole load (warm-up and soak, no idle phase) when the soak phase
// holds fewer than two. The window ends at the last record of a live
// target: a target that died leaves records of its grace period, which
// hold no request of the soak (see tally) and would thin its rate.
func soakWindow(recs []model.Record) (model.Record, model.Record, bool) {
	if a, b, ok := window(recs, func(p verdict.Phase) bool { return p == verdict.Soak }); ok {
		return a, b, true
	}
	return window(recs, func(p verdict.Phase) bool { return p == verdict.Warmup || p == verdict.Soak })
}

// window returns the first record in a phase that in accepts and the
// last one of a live target (or the last one, when none is live), when
// they are two.
func window(recs []model.Record, in func(verdict.Phase) bool) (model.Record, model.Record, bool) {
	var first, last, lastAlive *model.Record
	for i := range recs {
		if !in(recs[i].Phase) {
			continue
		}
		if first == nil {
			first = &recs[i]
		}
		last = &recs[i]
		if recs[i].Alive {
			lastAlive = last
		}
	}
	if lastAlive != nil {
		last = lastAlive
	}
	if first == nil || last == first {
		return model.Record{}, model.Record{}, false
	}
	return *first, *last, true
}

func soakRequestsPerHour(recs []model.Record) float64 {
	a, b, ok := soakWindow(recs)
	if !ok || b.Elapsed <= a.Elapsed {
		return 0
	}
	return float64(b.Requests-a.Requests) / (b.Elapsed - a.Elapsed) * 3600
}
