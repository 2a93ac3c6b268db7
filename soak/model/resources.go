package model

import (
	"maps"
	"slices"
	"strings"

	"github.com/soakd/soakd/probes"
)

// Kind says which of a run's leak thresholds a resource is judged by.
type Kind int

const (
	// Memory resources are judged by the memory thresholds and, for the
	// time to exhaustion, by the memory limit (--mem-limit or memory.max).
	Memory Kind = iota
	// Descriptors are judged by the fd thresholds and RLIMIT_NOFILE.
	Descriptors
	// Count resources (threads, sockets) use the verdict's count defaults.
	Count
)

// SeriesType says how a resource's readings accrue: a gauge is a level
// (its growth is the leak), a counter only ever rises (its rate is what
// grows or not).
type SeriesType int

const (
	// Gauge readings are levels, fitted as they are.
	Gauge SeriesType = iota
	// Counter readings are cumulative: the analysis judges their rate
	// per request (see Rates), so a counter that rises steadily with the
	// load is no leak, and one whose rate rises is growth.
	Counter
)

// CounterSuffix ends the name of an extra resource that is a counter,
// as Prometheus names counters.
const CounterSuffix = "_total"

// Chart names the chart of the run's page that draws a resource.
type Chart string

const (
	ChartMemory Chart = "memory" // memory against requests and over time
	ChartFDs    Chart = "fds"    // open fds against their limit
	ChartCounts Chart = "counts" // threads, sockets and other counts
	ChartNone   Chart = ""       // not drawn
)

// ResourceDef defines one resource the analysis fits: everything soakd
// knows about it, in one place. What the analysis finds for it is a
// verdict.Resource. The analysis, samples.csv, the report, the daemon's
// /metrics and the run's page all read their table, Resources; adding a
// resource is one entry there plus the probe that fills its field of
// probes.Sample.
type ResourceDef struct {
	Name  string // the report's name, e.g. "rss"
	Label string // the charts' legend, e.g. "RSS"
	Unit  string // "bytes", "fds", "threads", "sockets"
	// Quantum is the resolution of a reading, in Unit: memory is counted
	// in 4 KiB pages, everything else in ones. No slope is known finer
	// than a quantum over the fitted span.
	Quantum float64
	Kind    Kind
	// Type is Gauge or Counter.
	Type SeriesType
	// Remote says a remote source (probes/remote) reads it from the
	// target's metrics; a resource a remote run held no reading of is
	// inconclusive unless the source says why it is absent.
	Remote bool
	// Slow is true for resources read on a slower cadence than a sample
	// (smaps_rollup, the socket census): a short run often has too few of
	// their readings to decide, and then they do not hold the run's
	// verdict back.
	Slow bool
	// Setting is the option that reads it more often, named in the
	// advice when too few readings were taken; "" means --interval.
	Setting string
	// Value reads the resource from a record; ok is false when the record
	// holds no reading of it.
	Value func(Record) (v float64, ok bool)
	// Member reads it from one process of the tree, for the per-process
	// lives (workers that grow and are replaced); nil when it has none.
	Member func(probes.Member) (v float64, ok bool)
	// Limit is the limit the resource runs into, read from the record;
	// nil when it has none. memLimit is --mem-limit (0 = unset).
	Limit func(r Record, memLimit uint64) float64
	// Column is the resource's column of samples.csv.
	Column Column
	// Whole, when set, is the whole reading of which Value judges a part
	// (PSS and USS, whose clean file pages move with processes outside the
	// tree: see probes.Sample.PSSAnon). samples.csv has it where the
	// resource's column always was, and Column among its last columns; a
	// file that has only Whole (older soakd, or made by hand) still holds
	// the resource, judged on the whole.
	Whole *Column
	// Part reads the part from a record, and WholeLabel is the label of
	// a series that holds only the whole (see LabelOf).
	Part       func(Record) (uint64, bool)
	WholeLabel string
	// Metric and Help name the daemon's gauge of the resource's last
	// reading, labelled by job; "" for none.
	Metric, Help string
	// WholeMetric and WholeHelp name the daemon's gauge of the whole
	// reading of a resource judged on a part, read by WholeValue: the
	// series dashboards and rules had before the part was judged
	// (soakd_target_pss_bytes), kept with its meaning.
	WholeMetric, WholeHelp string
	WholeValue             func(Record) (float64, bool)
	// Chart is the chart that draws it.
	Chart Chart
	// Size marks the resource that measures the process tree's size (its
	// RSS): the transient rule judges the growth of every other memory
	// resource, a part of it, against its level at the load's start
	// (verdict.ResourceOptions.Size).
	Size bool
}

// Resources is the table of resources, in the order reports list them.
var Resources = []ResourceDef{
	{Name: "rss", Label: "RSS", Unit: "bytes", Quantum: page, Kind: Memory, Remote: true, Chart: ChartMemory, Size: true,
		Value:  func(r Record) (float64, bool) { return float64(r.RSS), r.RSSValid },
		Member: func(m probes.Member) (float64, bool) { return float64(m.RSS), true },
		Limit:  memoryLimit,
		Column: uintCol("rss_bytes", func(r *Record) *uint64 { return &r.RSS }),
		Metric: "soakd_target_resident_memory_bytes", Help: "Resident memory of the target's process tree."},
	{Name: "pss", Label: "PSS (anon+shmem)", Unit: "bytes", Quantum: page, Kind: Memory, Slow: true, Setting: "--smaps-interval", Chart: ChartMemory,
		Value: splitValue(pssAnon, pss), Part: pssAnon, WholeLabel: "PSS",
		Limit:  memoryLimit,
		Whole:  new(optCol("pss_bytes", func(r *Record) *uint64 { return &r.PSS }, smapsValid)),
		Column: optCol("pss_anon_bytes", func(r *Record) *uint64 { return &r.PSSAnon }, func(r *Record) *bool { return &r.PSSAnonValid }),
		Metric: "soakd_target_pss_anon_bytes", Help: "Proportional set size of the target's process tree in anonymous and shared memory (Pss_Anon + Pss_Shmem from smaps_rollup; the whole PSS on kernels without them): the part the pss verdict judges.",
		WholeMetric: "soakd_target_pss_bytes", WholeHelp: "Proportional set size of the target's process tree, the whole (smaps_rollup's Pss): it also moves when other processes mapping the same files start or exit.",
		WholeValue: func(r Record) (float64, bool) { return float64(r.PSS), r.SmapsValid }},
	{Name: "uss", Label: "USS (dirty)", Unit: "bytes", Quantum: page, Kind: Memory, Slow: true, Setting: "--smaps-interval", Chart: ChartMemory,
		Value: splitValue(ussDirty, uss), Part: ussDirty, WholeLabel: "USS",
		Limit:  memoryLimit,
		Whole:  new(optCol("uss_bytes", func(r *Record) *uint64 { return &r.USS }, smapsValid)),
		Column: optCol("uss_dirty_bytes", func(r *Record) *uint64 { return &r.USSDirty }, func(r *Record) *bool { return &r.USSDirtyValid })},
	{Name: "anon", Label: "cgroup anon", Unit: "bytes", Quantum: page, Kind: Memory, Chart: ChartMemory,
		Value:  func(r Record) (float64, bool) { return float64(r.MemAnon), r.CgroupValid },
		Limit:  memoryLimit,
		Column: optCol("mem_anon_bytes", func(r *Record) *uint64 { return &r.MemAnon }, cgroupValid),
		Metric: "soakd_target_anon_memory_bytes", Help: "Anonymous memory of the target's cgroup."},
	{Name: "fds", Label: "open fds less the load's connections", Unit: "fds", Quantum: 1, Kind: Descriptors, Remote: true, Chart: ChartFDs,
		Value: splitValue(fdsNet, fds), Part: fdsNet, WholeLabel: "open fds",
		Member: memberFDsNet,
		Limit:  func(r Record, _ uint64) float64 { return float64(r.FDLimit) },
		Whole:  new(optCol("fds", func(r *Record) *uint64 { return &r.FDs }, func(r *Record) *bool { return &r.FDsValid })),
		Column: optCol("fds_net_of_load", func(r *Record) *uint64 { return &r.FDsNet }, func(r *Record) *bool { return &r.FDsNetValid }),
		Metric: "soakd_target_open_fds_net_of_load", Help: "Open file descriptors of the target's process tree less the connections soakd's load holds open to it, when the tree serves the load (else all of them): the series the fds verdict judges.",
		WholeMetric: "soakd_target_open_fds", WholeHelp: "Open file descriptors of the target's process tree.",
		WholeValue: func(r Record) (float64, bool) { return float64(r.FDs), r.FDsValid }},
	{Name: "threads", Label: "threads", Unit: "threads", Quantum: 1, Kind: Count, Remote: true, Chart: ChartCounts,
		Value:  func(r Record) (float64, bool) { return float64(r.Threads), r.ThreadsValid },
		Column: uintCol("threads", func(r *Record) *uint64 { return &r.Threads }),
		Metric: "soakd_target_threads", Help: "Threads of the target's process tree."},
	{Name: "close_wait", Label: "CLOSE_WAIT sockets", Unit: "sockets", Quantum: 1, Kind: Count, Slow: true, Chart: ChartCounts,
		Value:  func(r Record) (float64, bool) { return float64(r.TCPCloseWait), r.TCPValid },
		Column: optCol("tcp_close_wait", func(r *Record) *int { return &r.TCPCloseWait }, tcpValid)},
}

// LabelOf is the resource's label for a series of records like r: the
// whole's where a resource judged on a part has only the whole in r.
func (d ResourceDef) LabelOf(r Record) string {
	if d.Part != nil {
		if _, ok := d.Part(r); !ok {
			return d.WholeLabel
		}
	}
	return d.Label
}

// SeriesOf names the column a series of records like r is judged on,
// for a resource with a Whole (Column's, or Whole's where r has only the
// whole); "" for the others.
func (d ResourceDef) SeriesOf(r Record) string {
	if d.Whole == nil {
		return ""
	}
	if _, ok := d.Part(r); ok {
		return d.Column.Name
	}
	return d.Whole.Name
}

// SeriesOrWhole is the column a report's resource was judged on: series
// as the report gives it, or, for a report made before parts were
// judged (series ""), the whole's.
func (d ResourceDef) SeriesOrWhole(series string) string {
	if series == "" && d.Whole != nil {
		return d.Whole.Name
	}
	return series
}

func pssAnon(r Record) (uint64, bool)  { return r.PSSAnon, r.PSSAnonValid }
func ussDirty(r Record) (uint64, bool) { return r.USSDirty, r.USSDirtyValid }
func pss(r Record) (uint64, bool)      { return r.PSS, r.SmapsValid }
func uss(r Record) (uint64, bool)      { return r.USS, r.SmapsValid }
func fdsNet(r Record) (uint64, bool)   { return r.FDsNet, r.FDsNetValid }
func fds(r Record) (uint64, bool)      { return r.FDs, r.FDsValid }

// memberFDsNet is a process's fds less its connections to soakd (the
// load's: probes.Member.LoadConns), as the tree's fds are judged net of
// the load's connections: a prefork worker holds every connection it
// accepted, and an open loop on a busy machine opens more. A member
// without the count (stored before it, another network namespace) gives
// all its fds.
func memberFDsNet(m probes.Member) (float64, bool) {
	if m.LoadConnsValid {
		return float64(m.FDs - min(m.LoadConns, m.FDs)), !m.NoFDs
	}
	return float64(m.FDs), !m.NoFDs
}

// splitValue judges the part of a reading that part gives where the
// record has it, else the whole (a sample stored or written before the
// part was read, a kernel without it, or a run whose tree does not serve
// the load): all of a run's samples come from one kernel and one soakd,
// which decides at the start whether the tree serves the load, so a
// series never mixes the two.
func splitValue(part, whole func(Record) (uint64, bool)) func(Record) (float64, bool) {
	return func(r Record) (float64, bool) {
		if v, ok := part(r); ok {
			return float64(v), true
		}
		v, ok := whole(r)
		return float64(v), ok
	}
}

// page is the resolution of memory readings.
const page = 4096

// memoryLimit is --mem-limit when set, else the cgroup's memory.max.
func memoryLimit(r Record, memLimit uint64) float64 {
	if memLimit > 0 {
		return float64(memLimit)
	}
	return float64(r.MemMax)
}

// ExtraResources are the extra series a remote source read into the
// records (probes.Sample.Extra, from --probe-metric NAME=SERIES), in name
// order, each fitted like a resource of the table: a NAME ending in
// _bytes as memory, any other as a count; a NAME ending in _total
// (CounterSuffix) is a counter, judged by its rate. They live in
// samples.csv's extra column.
func ExtraResources(recs []Record) []ResourceDef {
	names := map[string]bool{}
	for _, r := range recs {
		for n := range r.Extra {
			names[n] = true
		}
	}
	var out []ResourceDef
	for _, n := range slices.Sorted(maps.Keys(names)) {
		res := ResourceDef{Name: n, Label: n, Unit: "units", Quantum: 1, Kind: Count,
			Value: func(r Record) (float64, bool) { v, ok := r.Extra[n]; return v, ok }}
		if strings.HasSuffix(n, "_bytes") {
			res.Unit, res.Quantum, res.Kind, res.Limit = "bytes", page, Memory, memoryLimit
		}
		if strings.HasSuffix(n, CounterSuffix) {
			res.Type = Counter
		}
		out = append(out, res)
	}
	return out
}

// Taken says whether name is a resource soakd fits already, so that an
// extra resource must not take it.
func Taken(name string) bool {
	_, ok := ResourceNamed(name)
	return ok
}

// ResourceNamed returns the table's entry for a report name.
func ResourceNamed(name string) (ResourceDef, bool) {
	for _, r := range Resources {
		if r.Name == name {
			return r, true
		}
	}
	return ResourceDef{}, false
}
