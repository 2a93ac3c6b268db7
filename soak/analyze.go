package soak

import (
	"maps"
	"slices"
	"strings"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// AnalysisOptions are what the analysis needs beyond the records.
type AnalysisOptions struct {
	Memory, FDs verdict.Thresholds
	MemLimit    uint64 // bytes; 0 = the cgroup's memory.max, if any
	Concurrency int    // closed-loop workers; 0 in open loop
	CPUs        int    // 0 = runtime.NumCPU()
	// Resources limits the analysis to these resources (report names,
	// e.g. "rss"); nil analyses every one the records hold. A samples.csv
	// without a resource's column sets it (see ReadSamples).
	Resources []string
}

// series picks one resource's value out of a record; ok is false when the
// record holds no reading of it.
type series struct {
	name, unit string
	value      func(Record) (float64, bool)
	memory     bool
	limit      func(Record) float64
	// member picks the value out of one process of the tree, for the
	// per-process lives; nil when the resource has none.
	member func(probes.Member) (float64, bool)
}

func resourceSeries(memLimit uint64) []series {
	memMax := func(r Record) float64 {
		if memLimit > 0 {
			return float64(memLimit)
		}
		return float64(r.MemMax)
	}
	return []series{
		{name: "rss", unit: "bytes", memory: true, limit: memMax,
			value:  func(r Record) (float64, bool) { return float64(r.RSS), !r.NoRSS },
			member: func(m probes.Member) (float64, bool) { return float64(m.RSS), true }},
		{name: "pss", unit: "bytes", memory: true, limit: memMax,
			value: func(r Record) (float64, bool) { return float64(r.PSS), r.SmapsValid }},
		{name: "uss", unit: "bytes", memory: true, limit: memMax,
			value: func(r Record) (float64, bool) { return float64(r.USS), r.SmapsValid }},
		{name: "anon", unit: "bytes", memory: true, limit: memMax,
			value: func(r Record) (float64, bool) { return float64(r.MemAnon), r.CgroupValid }},
		{name: "fds", unit: "fds", limit: func(r Record) float64 { return float64(r.FDLimit) },
			value:  func(r Record) (float64, bool) { return float64(r.FDs), r.FDsValid },
			member: func(m probes.Member) (float64, bool) { return float64(m.FDs), !m.NoFDs }},
		{name: "threads", unit: "threads",
			value: func(r Record) (float64, bool) { return float64(r.Threads), !r.NoThreads }},
		{name: "close_wait", unit: "sockets",
			value: func(r Record) (float64, bool) { return float64(r.TCPCloseWait), r.TCPValid }},
	}
}

// extraSeries are the extra gauges a remote source read (Sample.Extra),
// in name order: a name ending in _bytes is memory, any other a count.
func extraSeries(recs []Record, memLimit uint64) []series {
	names := map[string]bool{}
	for _, r := range recs {
		for n := range r.Extra {
			names[n] = true
		}
	}
	var out []series
	for _, n := range slices.Sorted(maps.Keys(names)) {
		s := series{name: n, unit: "units", value: func(r Record) (float64, bool) { v, ok := r.Extra[n]; return v, ok }}
		if strings.HasSuffix(n, "_bytes") {
			s.unit, s.memory = "bytes", true
			s.limit = func(r Record) float64 {
				if memLimit > 0 {
					return float64(memLimit)
				}
				return float64(r.MemMax)
			}
		}
		out = append(out, s)
	}
	return out
}

// Analyze fits every resource that the records hold and makes the CPU
// verdict. It is safe to call on a snapshot mid-run (the daemon's live
// analysis does).
func Analyze(recs []Record, sum *load.Summary, ao AnalysisOptions) (map[string]verdict.Resource, verdict.CPU) {
	if ao.Memory == (verdict.Thresholds{}) {
		ao.Memory = verdict.MemoryThresholds
	}
	if ao.FDs == (verdict.Thresholds{}) {
		ao.FDs = verdict.FDThresholds
	}
	perHour := soakRequestsPerHour(recs)
	out := map[string]verdict.Resource{}
	for _, s := range append(resourceSeries(ao.MemLimit), extraSeries(recs, ao.MemLimit)...) {
		if ao.Resources != nil && !slices.Contains(ao.Resources, s.name) {
			continue
		}
		pts, last, ok := points(recs, s.value)
		if !ok {
			continue
		}
		th := verdict.CountThresholds
		switch {
		case s.memory:
			th = ao.Memory
		case s.name == "fds":
			th = ao.FDs
		}
		opt := verdict.ResourceOptions{Name: s.name, Unit: s.unit, Thresholds: th, RequestsPerHour: perHour}
		if s.limit != nil {
			opt.Limit = s.limit(last)
		}
		if s.member != nil {
			opt.Lives = lives(recs, s.member)
		}
		out[s.name] = verdict.AnalyzeResource(pts, opt)
	}
	return out, verdict.AnalyzeCPU(cpuInput(recs, sum, ao))
}

// points extracts one resource's points from the live samples that hold a
// reading of it, and the last such record.
func points(recs []Record, value func(Record) (float64, bool)) ([]verdict.Point, Record, bool) {
	var pts []verdict.Point
	var last Record
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

func lives(recs []Record, value func(probes.Member) (float64, bool)) [][]verdict.Point {
	type identity struct {
		pid   int32
		start uint64
	}
	index := map[identity]int{}
	var counts []int
	each := func(fn func(r *Record, i int, v float64)) {
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
	each(func(_ *Record, i int, _ float64) { counts[i]++; total++ })
	out := make([][]verdict.Point, len(counts))
	all := make([]verdict.Point, total)
	for i, n := range counts {
		out[i], all = all[:0:n], all[n:]
	}
	each(func(r *Record, i int, v float64) {
		out[i] = append(out[i], verdict.Point{
			Requests: float64(r.Requests), Seconds: r.Elapsed, Value: v,
			Incarnation: r.Incarnation, Phase: r.Phase,
		})
	})
	return out
}

// soakWindow returns the first and last records of the soak phase, or of
// the whole load (warm-up and soak, no idle phase) when the soak phase
// holds fewer than two.
func soakWindow(recs []Record) (Record, Record, bool) {
	var first, last *Record
	for i := range recs {
		if recs[i].Phase != verdict.Soak {
			continue
		}
		if first == nil {
			first = &recs[i]
		}
		last = &recs[i]
	}
	if first != nil && last != first {
		return *first, *last, true
	}
	var load []Record
	for _, r := range recs {
		if r.Phase == verdict.Warmup || r.Phase == verdict.Soak {
			load = append(load, r)
		}
	}
	if len(load) < 2 {
		return Record{}, Record{}, false
	}
	return load[0], load[len(load)-1], true
}

func soakRequestsPerHour(recs []Record) float64 {
	a, b, ok := soakWindow(recs)
	if !ok || b.Elapsed <= a.Elapsed {
		return 0
	}
	return float64(b.Requests-a.Requests) / (b.Elapsed - a.Elapsed) * 3600
}
