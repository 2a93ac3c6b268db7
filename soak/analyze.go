package soak

import (
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// AnalysisOptions are what the analysis needs beyond the records.
type AnalysisOptions struct {
	Memory, FDs verdict.Thresholds
	MemLimit    uint64 // bytes; 0 = the cgroup's memory.max, if any
	Concurrency int    // closed-loop workers; 0 in open loop
	CPUs        int    // 0 = runtime.NumCPU()
}

// series picks one resource's value out of a record; ok is false when the
// record holds no reading of it.
type series struct {
	name, unit string
	value      func(Record) (float64, bool)
	memory     bool
	limit      func(Record) float64
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
			value: func(r Record) (float64, bool) { return float64(r.RSS), true }},
		{name: "pss", unit: "bytes", memory: true, limit: memMax,
			value: func(r Record) (float64, bool) { return float64(r.PSS), r.SmapsValid }},
		{name: "uss", unit: "bytes", memory: true, limit: memMax,
			value: func(r Record) (float64, bool) { return float64(r.USS), r.SmapsValid }},
		{name: "anon", unit: "bytes", memory: true, limit: memMax,
			value: func(r Record) (float64, bool) { return float64(r.MemAnon), r.CgroupValid }},
		{name: "fds", unit: "fds", limit: func(r Record) float64 { return float64(r.FDLimit) },
			value: func(r Record) (float64, bool) { return float64(r.FDs), r.FDsValid }},
		{name: "threads", unit: "threads",
			value: func(r Record) (float64, bool) { return float64(r.Threads), true }},
		{name: "close_wait", unit: "sockets",
			value: func(r Record) (float64, bool) { return float64(r.TCPCloseWait), r.TCPValid }},
	}
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
	for _, s := range resourceSeries(ao.MemLimit) {
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

// soakWindow returns the first and last records of the soak phase, or of
// the whole load when the soak phase holds fewer than two.
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
		if r.Phase != verdict.Cooldown {
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
