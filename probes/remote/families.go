package remote

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/soakd/soakd/probes"
)

// Keys of a reading: what one source's series map to.
const (
	kRSS        = "rss"
	kVMS        = "vms"
	kFDs        = "fds"
	kFDLimit    = "fd_limit"
	kThreads    = "threads"
	kProcs      = "procs"
	kCPUTotal   = "cpu_total"
	kCPUUser    = "cpu_user"
	kCPUSystem  = "cpu_system"
	kStart      = "start"
	kMemLimit   = "mem_limit"
	kCPUQuota   = "cpu_quota"
	kCPUPeriod  = "cpu_period"
	kWorkingSet = "working_set_bytes"
	extraPrefix = "extra:"
)

// series is one mapping: the metric with these labels gives key. Among
// several series of one key, the first one present wins.
type series struct {
	key    string
	metric string
	labels map[string]string
}

// family is one standard set of series, named by what exports it.
type family struct {
	name   string
	anchor series // present whenever the family is: decides which family a source speaks
	series []series
	// absent says why each resource the family has no series for is
	// absent from this source.
	absent map[string]string
}

var families = []*family{
	{
		name:   "process_* (Prometheus client library)",
		anchor: series{kRSS, "process_resident_memory_bytes", nil},
		series: []series{
			{kRSS, "process_resident_memory_bytes", nil},
			{kVMS, "process_virtual_memory_bytes", nil},
			{kFDs, "process_open_fds", nil},
			{kFDLimit, "process_max_fds", nil},
			{kCPUTotal, "process_cpu_seconds_total", nil},
			{kStart, "process_start_time_seconds", nil},
			{kThreads, "go_threads", nil},
			{kThreads, "jvm_threads_current", nil},
			{kThreads, "jvm_threads_live_threads", nil},
		},
		absent: map[string]string{
			"pss": "the process collector exports no PSS", "uss": "the process collector exports no USS",
			"anon": "the process collector exports no cgroup memory", "close_wait": "the process collector exports no socket states",
		},
	},
	{
		name:   "container_* (cAdvisor, kubelet)",
		anchor: series{kWorkingSet, "container_memory_working_set_bytes", nil},
		series: []series{
			{kRSS, "container_memory_rss", nil},
			{kWorkingSet, "container_memory_working_set_bytes", nil},
			{kMemLimit, "container_spec_memory_limit_bytes", nil},
			{kCPUQuota, "container_spec_cpu_quota", nil},
			{kCPUPeriod, "container_spec_cpu_period", nil},
			{kFDs, "container_file_descriptors", nil},
			{kThreads, "container_threads", nil},
			{kProcs, "container_processes", nil},
			{kCPUUser, "container_cpu_user_seconds_total", nil},
			{kCPUSystem, "container_cpu_system_seconds_total", nil},
			{kStart, "container_start_time_seconds", nil},
		},
		absent: map[string]string{
			"pss": "cAdvisor exports no PSS", "uss": "cAdvisor exports no USS",
			"anon": "cAdvisor exports the working set (working_set_bytes), not memory.stat's anon", "close_wait": "cAdvisor exports no socket states",
		},
	},
	{
		name:   "namedprocess_namegroup_* (process-exporter)",
		anchor: series{kRSS, "namedprocess_namegroup_memory_bytes", map[string]string{"memtype": "resident"}},
		series: []series{
			{kRSS, "namedprocess_namegroup_memory_bytes", map[string]string{"memtype": "resident"}},
			{kVMS, "namedprocess_namegroup_memory_bytes", map[string]string{"memtype": "virtual"}},
			{kFDs, "namedprocess_namegroup_open_filedesc", nil},
			{kThreads, "namedprocess_namegroup_num_threads", nil},
			{kProcs, "namedprocess_namegroup_num_procs", nil},
			{kCPUUser, "namedprocess_namegroup_cpu_seconds_total", map[string]string{"mode": "user"}},
			{kCPUSystem, "namedprocess_namegroup_cpu_seconds_total", map[string]string{"mode": "system"}},
			{kStart, "namedprocess_namegroup_oldest_start_time_seconds", nil},
		},
		absent: map[string]string{
			"pss": "process-exporter exports PSS only with -gather-smaps, which soakd does not read", "uss": "process-exporter exports no USS",
			"anon": "process-exporter exports no cgroup memory", "close_wait": "process-exporter exports no socket states",
		},
	},
}

// metricNames lists every metric a source may read: the families' and
// the extras'.
func metricNames(extras []Extra) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, f := range families {
		for _, s := range f.series {
			add(s.metric)
		}
	}
	for _, x := range extras {
		add(x.Metric)
	}
	return out
}

// point is one series' value, with its labels.
type point struct {
	labels map[string]string
	value  float64
}

// snapshot holds one scrape or query's points by metric name.
type snapshot map[string][]point

// matching returns the points of metric whose labels include want.
func (s snapshot) matching(metric string, want map[string]string) []point {
	var out []point
	for _, p := range s[metric] {
		ok := true
		for k, v := range want {
			if p.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// detect picks the family whose anchor the snapshot holds, and checks it
// holds exactly one such series.
func detect(s snapshot, where string) (*family, error) {
	var names []string
	for _, f := range families {
		pts := s.matching(f.anchor.metric, f.anchor.labels)
		names = append(names, describeSeries(f.anchor))
		switch {
		case len(pts) == 1:
			return f, nil
		case len(pts) > 1:
			return nil, fmt.Errorf("%s holds %d series of %s, one per process or container; soakd follows one: %s",
				where, len(pts), describeSeries(f.anchor), labelSets(pts, 5))
		}
	}
	return nil, fmt.Errorf("%s holds none of %s: it is not a process, container or process-exporter series set", where, strings.Join(names, ", "))
}

func describeSeries(s series) string {
	if len(s.labels) == 0 {
		return s.metric
	}
	return s.metric + formatLabels(s.labels)
}

func formatLabels(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, ls[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// labelSets lists up to n points' label sets.
func labelSets(pts []point, n int) string {
	var parts []string
	for i, p := range pts {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(pts)-n))
			break
		}
		parts = append(parts, formatLabels(p.labels))
	}
	return strings.Join(parts, " ")
}

// reading is one sample's values by key; a key missing is absent.
type reading map[string]float64

// read maps a snapshot to a reading through f and the extras. A key with
// more than one matching series takes none (it is ambiguous) and is
// reported through ambiguous.
func read(s snapshot, f *family, extras []Extra) (r reading, ambiguous []string) {
	r = reading{}
	for _, se := range f.series {
		if _, done := r[se.key]; done {
			continue
		}
		switch pts := s.matching(se.metric, se.labels); len(pts) {
		case 0:
		case 1:
			r[se.key] = pts[0].value
		default:
			ambiguous = append(ambiguous, fmt.Sprintf("%s matches %d series (%s)", describeSeries(se), len(pts), labelSets(pts, 3)))
		}
	}
	for _, x := range extras {
		switch pts := s.matching(x.Metric, x.Labels); len(pts) {
		case 0:
		case 1:
			r[extraPrefix+x.Name] = pts[0].value
		default:
			ambiguous = append(ambiguous, fmt.Sprintf("%s=%s matches %d series (%s); add labels to pick one", x.Name, describeSeries(series{metric: x.Metric, labels: x.Labels}), len(pts), labelSets(pts, 3)))
		}
	}
	return r, ambiguous
}

// whole returns the value of key as a count or a byte size; ok is false
// when the key is missing or its value is not a number a uint64 holds
// (NaN, negative, infinite, 2^64 or more), which is taken as not read.
func (r reading) whole(key string) (uint64, bool) {
	v, ok := r[key]
	if !ok {
		return 0, false
	}
	return wholeOf(v)
}

func wholeOf(v float64) (uint64, bool) {
	if !(v >= 0 && v < math.MaxUint64) { // float64(MaxUint64) is 2^64
		return 0, false
	}
	return uint64(v), true
}

// builder turns readings into samples: it follows incarnations (a start
// time that changes) and keeps CPU counters monotonic across resets.
type builder struct {
	fam         *family
	incarnation int
	start       float64
	seen        bool
	cpu         [3]counter // total, user, system
	notes       *notes
	lost        bool            // the last reading had no anchor
	gone        map[string]bool // keys seen once and missing now
	had         map[string]bool
}

func newBuilder(f *family, n *notes) *builder {
	return &builder{fam: f, notes: n, gone: map[string]bool{}, had: map[string]bool{}}
}

// counter keeps a cumulative counter monotonic: a fall that is not a
// restart is a reset (the exporter restarted), and the value before it is
// carried as base.
type counter struct {
	base, last float64
	ok         bool
}

func (c *counter) add(v float64) (resets bool) {
	if c.ok && v < c.last {
		c.base += c.last
		resets = true
	}
	c.last, c.ok = v, true
	return resets
}

func (c *counter) value() float64 { return c.base + c.last }

// sample builds one sample at t from r. A reading without the family's
// anchor is a target not seen: Alive is false.
func (b *builder) sample(t time.Time, r reading) probes.Sample {
	s := probes.Sample{Time: t}
	if _, ok := r[b.fam.anchor.key]; !ok {
		s.Incarnation = max(b.incarnation, 1)
		if b.seen && !b.lost {
			b.lost = true
			b.notes.add(fmt.Sprintf("the target's series disappeared at %s: its samples are absent until they come back", t.UTC().Format(time.TimeOnly)))
		}
		return s
	}
	b.lost = false
	b.follow(t, r)
	s.Alive = true
	s.Incarnation = b.incarnation
	s.Procs = 1
	if v, ok := r.whole(kProcs); ok && v < math.MaxInt32 {
		s.Procs = int(v)
	}
	s.RootStart, _ = wholeOf(b.start)
	s.RSS, s.RSSValid = r.whole(kRSS)
	s.VMS, _ = r.whole(kVMS)
	if v, ok := r.whole(kFDs); ok {
		s.FDs, s.FDsValid = v, true
	}
	if v := r[kFDLimit]; v > 0 && v < math.MaxInt64 {
		s.FDLimit = uint64(v)
	}
	s.Threads, s.ThreadsValid = r.whole(kThreads)
	if q, p := r[kCPUQuota], r[kCPUPeriod]; q > 0 && p > 0 {
		s.CPUCapacity = q / p
		s.CPUCapacitySource = "the container's CPU quota (container_spec_cpu_quota / container_spec_cpu_period)"
	}
	if v := r[kMemLimit]; v > 0 && v < 1<<62 {
		s.MemMax = uint64(v)
	}
	b.cpuInto(&s, t, r)
	for k, v := range r {
		name, extra := strings.CutPrefix(k, extraPrefix)
		if !extra && k != kWorkingSet {
			continue
		}
		if s.Extra == nil {
			s.Extra = map[string]float64{}
		}
		s.Extra[name] = v
	}
	b.watchGone(t, r)
	return s
}

// follow moves to a new incarnation when the start time changes, or, for
// a source without a start time, when the CPU counter falls.
func (b *builder) follow(t time.Time, r reading) {
	st, hasStart := r[kStart]
	switch {
	case !b.seen:
		b.incarnation, b.start, b.seen = 1, st, true
	case hasStart && st != b.start:
		b.incarnation++
		b.start = st
		b.cpu = [3]counter{}
		b.notes.add(fmt.Sprintf("restart at %s: the start time changed, so a new incarnation (each is fitted apart)", t.UTC().Format(time.TimeOnly)))
	case !hasStart && b.cpu[0].ok && r[kCPUTotal] < b.cpu[0].last:
		b.incarnation++
		b.cpu = [3]counter{}
		b.notes.add(fmt.Sprintf("the CPU counter fell at %s and the source has no start time: taken as a restart", t.UTC().Format(time.TimeOnly)))
	}
}

func (b *builder) cpuInto(s *probes.Sample, t time.Time, r reading) {
	u, hasU := r[kCPUUser]
	sys, hasS := r[kCPUSystem]
	tot, hasT := r[kCPUTotal]
	reset := false
	switch {
	case hasU && hasS:
		reset = b.cpu[1].add(u) || reset
		reset = b.cpu[2].add(sys) || reset
		s.CPUUser, s.CPUSystem = b.cpu[1].value(), b.cpu[2].value()
	case hasT:
		reset = b.cpu[0].add(tot)
		s.CPUUser, s.CPUSplitUnknown = b.cpu[0].value(), true
	default:
		s.NoCPU = true
	}
	if reset {
		b.notes.add(fmt.Sprintf("counter reset at %s with no restart (the exporter restarted?): the CPU counter is carried on from its last value", t.UTC().Format(time.TimeOnly)))
	}
}

// watchGone notes a series that was read before and is missing now.
func (b *builder) watchGone(t time.Time, r reading) {
	for k := range b.had {
		if _, ok := r[k]; !ok && !b.gone[k] {
			b.gone[k] = true
			b.notes.add(fmt.Sprintf("the series for %s disappeared at %s: its later samples are absent", strings.TrimPrefix(k, extraPrefix), t.UTC().Format(time.TimeOnly)))
		}
	}
	for k := range r {
		b.had[k] = true
		delete(b.gone, k)
	}
}

// absent says, for each resource the family and extras cannot give, why.
func absent(f *family, r reading) map[string]string {
	out := map[string]string{}
	maps.Copy(out, f.absent)
	if _, ok := r[kFDs]; !ok {
		out[kFDs] = "the source has no open-fd series (" + seriesFor(f, kFDs) + ")"
	}
	if _, ok := r[kThreads]; !ok {
		out[kThreads] = "the source has no thread-count series (" + seriesFor(f, kThreads) + ")"
	}
	if _, ok := r[kRSS]; !ok {
		out[kRSS] = "the source has no resident-memory series (" + seriesFor(f, kRSS) + ")"
	}
	return out
}

func seriesFor(f *family, key string) string {
	var names []string
	for _, s := range f.series {
		if s.key == key {
			names = append(names, describeSeries(s))
		}
	}
	if len(names) == 0 {
		return "none in " + f.name
	}
	return "looked for " + strings.Join(names, " or ")
}
