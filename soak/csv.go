package soak

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

// CSVHeader names the columns of samples.csv; each name carries its unit.
var CSVHeader = []string{
	"time", "elapsed_seconds", "phase", "requests", "errors", "rate_rps", "p50_seconds", "p99_seconds",
	"alive", "incarnation", "root_pid", "procs",
	"rss_bytes", "vms_bytes", "swap_bytes", "pss_bytes", "uss_bytes",
	"fds", "fd_limit", "threads",
	"cpu_user_seconds", "cpu_system_seconds", "ctx_voluntary", "ctx_involuntary",
	"read_bytes", "write_bytes",
	"tcp_established", "tcp_close_wait", "tcp_time_wait", "tcp_listen",
	"mem_current_bytes", "mem_max_bytes", "mem_anon_bytes", "mem_file_bytes",
	"self_cpu_user_seconds", "self_cpu_system_seconds", "self_rss_bytes",
	"runqueue_wait_seconds",
	"hot_thread_pid", "hot_thread_tid", "hot_thread_name", "hot_thread_cpu", "hot_thread_wait",
	"hot_proc_pid", "hot_proc_name", "hot_proc_cores",
	"cpu_capacity_cores", "cpu_capacity_source",
	"host_cpu_busy_seconds", "host_cpu_total_seconds", "host_cpus",
}

// PhaseName is the name of a phase in samples.csv and reports.
func PhaseName(p verdict.Phase) string {
	switch p {
	case verdict.Warmup:
		return "warmup"
	case verdict.Cooldown:
		return "cooldown"
	case verdict.Baseline:
		return "baseline"
	}
	return "soak"
}

func parsePhase(s string) (verdict.Phase, error) {
	switch s {
	case "warmup":
		return verdict.Warmup, nil
	case "soak":
		return verdict.Soak, nil
	case "cooldown":
		return verdict.Cooldown, nil
	case "baseline":
		return verdict.Baseline, nil
	}
	return 0, fmt.Errorf("phase %q is not one of baseline, warmup, soak, cooldown", s)
}

// RecordRow formats a record as a samples.csv row. Values that were not
// read in a sample (PSS outside the smaps cadence, sockets outside theirs,
// fds or I/O without permission, cgroup figures outside a unit) are empty
// cells.
func RecordRow(r Record) []string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	i := func(v int) string { return strconv.Itoa(v) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(ok bool, s string) string {
		if ok {
			return s
		}
		return ""
	}
	return []string{
		r.Time.UTC().Format(time.RFC3339Nano), f(r.Elapsed), PhaseName(r.Phase), u(r.Requests), u(r.Errors),
		f(r.Rate), f(r.P50), f(r.P99),
		strconv.FormatBool(r.Alive), i(r.Incarnation), strconv.Itoa(int(r.RootPID)), i(r.Procs),
		u(r.RSS), u(r.VMS), u(r.Swap), opt(r.SmapsValid, u(r.PSS)), opt(r.SmapsValid, u(r.USS)),
		opt(r.FDsValid, u(r.FDs)), u(r.FDLimit), u(r.Threads),
		f(r.CPUUser), f(r.CPUSystem), u(r.CtxVoluntary), u(r.CtxInvol),
		opt(r.IOValid, u(r.ReadBytes)), opt(r.IOValid, u(r.WriteBytes)),
		opt(r.TCPValid, i(r.TCPEstablished)), opt(r.TCPValid, i(r.TCPCloseWait)),
		opt(r.TCPValid, i(r.TCPTimeWait)), opt(r.TCPValid, i(r.TCPListen)),
		opt(r.CgroupValid, u(r.MemCurrent)), opt(r.CgroupValid, u(r.MemMax)),
		opt(r.CgroupValid, u(r.MemAnon)), opt(r.CgroupValid, u(r.MemFile)),
		f(r.SelfUser), f(r.SelfSystem), u(r.SelfRSS),
		opt(r.RunqueueValid, f(r.RunqueueWait)),
		opt(r.HotValid, i(int(r.HotThreadPID))), opt(r.HotValid, i(int(r.HotThreadTID))), opt(r.HotValid, r.HotThreadName),
		opt(r.HotValid, f(r.HotThreadCPU)), opt(r.HotValid, f(r.HotThreadWait)),
		opt(r.HotValid, i(int(r.HotProcPID))), opt(r.HotValid, r.HotProcName), opt(r.HotValid, f(r.HotProcCores)),
		opt(r.CPUCapacity > 0, f(r.CPUCapacity)), r.CPUCapacitySource,
		opt(r.HostCPUValid, f(r.HostCPUBusy)), opt(r.HostCPUValid, f(r.HostCPUTotal)), opt(r.HostCPUValid, i(r.HostCPUs)),
	}
}

// WriteCSV writes the header and one row per record, in samples.csv's
// format.
func WriteCSV(w io.Writer, recs []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range recs {
		if err := cw.Write(RecordRow(r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvWriter appends records to samples.csv and their members to procs.csv
// and flushes both every sample, so that a run killed with -9 leaves every
// sample taken so far on disk.
type csvWriter struct {
	samples, procs *csvFile
}

// createCSV creates samples.csv at path and procs.csv in the same
// directory.
func createCSV(path string) (*csvWriter, error) {
	samples, err := createCSVFile(path, CSVHeader)
	if err != nil {
		return nil, err
	}
	procs, err := createCSVFile(filepath.Join(filepath.Dir(path), "procs.csv"), ProcsCSVHeader)
	if err != nil {
		samples.Close()
		return nil, err
	}
	return &csvWriter{samples: samples, procs: procs}, nil
}

// Write appends one record to samples.csv and its members to procs.csv,
// and flushes both.
func (c *csvWriter) Write(r Record) error {
	if err := c.samples.rows(RecordRow(r)); err != nil {
		return err
	}
	if err := c.procs.rows(MemberRows(r)...); err != nil {
		return fmt.Errorf("procs.csv: %w", err)
	}
	return nil
}

// Close closes both files.
func (c *csvWriter) Close() error { return errors.Join(c.samples.Close(), c.procs.Close()) }

// csvFile is one CSV file written as the run goes.
type csvFile struct {
	f *os.File
	w *csv.Writer
}

func createCSVFile(path string, header []string) (*csvFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	c := &csvFile{f: f, w: csv.NewWriter(f)}
	if err := c.rows(header); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// rows appends rows and flushes them to the file.
func (c *csvFile) rows(rows ...[]string) error {
	for _, cells := range rows {
		if err := c.w.Write(cells); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

func (c *csvFile) Close() error { return c.f.Close() }

// ReadCSV reads records back from a samples.csv. See ReadSamples for the
// columns it needs.
func ReadCSV(r io.Reader) ([]Record, error) {
	recs, _, err := ReadSamples(r)
	if err != nil {
		return recs, fmt.Errorf("samples.csv: %w", err)
	}
	return recs, nil
}

// RequiredColumns are the columns a samples.csv must have: the time (time
// or elapsed_seconds, or both), the phase and the request count, and at
// least one of ResourceColumns. Every other column of CSVHeader is
// optional, in any order.
var RequiredColumns = []string{"time|elapsed_seconds", "phase", "requests"}

// ResourceColumns maps the columns that hold a resource to its name in
// the report.
var ResourceColumns = map[string]string{
	"rss_bytes": "rss", "pss_bytes": "pss", "uss_bytes": "uss", "mem_anon_bytes": "anon",
	"fds": "fds", "threads": "threads", "tcp_close_wait": "close_wait",
}

// ReadSamples reads records from a samples.csv, soakd's own or one made
// by hand: the header names the columns (those of CSVHeader, in any
// order; see RequiredColumns), and the resources returned are the report
// names of the resource columns present. A missing column reads as not
// sampled; without alive every row is alive, without incarnation every
// row is the first incarnation, without time the times count from zero,
// and without elapsed_seconds the seconds count from the first time.
// Errors name the line and the column and say what to do; the caller
// names the file.
func ReadSamples(r io.Reader) ([]Record, []string, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("line 1: %w (want a header line naming the columns, e.g. %s)", err, strings.Join(CSVHeader[:4], ","))
	}
	cols, resources, err := headerColumns(head)
	if err != nil {
		return nil, nil, fmt.Errorf("line 1: %w", err)
	}
	var recs []Record
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return recs, resources, fmt.Errorf("%w (every row needs the header's %d columns)", err, len(head))
		}
		rec := Record{Sample: probes.Sample{Alive: true, Incarnation: 1}}
		for i, c := range cols {
			if err := c.set(&rec, row[i]); err != nil {
				return recs, resources, fmt.Errorf("line %d: column %s: %w", line, c.name, err)
			}
		}
		recs = append(recs, rec)
	}
	fillTimes(recs, cols)
	return recs, resources, nil
}

// headerColumns maps the header to its columns, and checks that the
// required ones are there.
func headerColumns(head []string) ([]csvColumn, []string, error) {
	seen := map[string]bool{}
	var cols []csvColumn
	var resources []string
	for i, h := range head {
		name := strings.TrimSpace(h)
		set, ok := columnSetters[name]
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("column %d %q is not a samples.csv column: rename it to one of %s, or remove it", i+1, name, strings.Join(CSVHeader, ", "))
		case seen[name]:
			return nil, nil, fmt.Errorf("column %d %q appears twice: keep one", i+1, name)
		}
		seen[name] = true
		cols = append(cols, csvColumn{name: name, set: set})
		if res, ok := ResourceColumns[name]; ok {
			resources = append(resources, res)
		}
	}
	for _, req := range RequiredColumns {
		if !slices.ContainsFunc(strings.Split(req, "|"), func(n string) bool { return seen[n] }) {
			return nil, nil, fmt.Errorf("no %s column: a samples.csv needs %s, and at least one resource column", strings.ReplaceAll(req, "|", " or "), strings.ReplaceAll(strings.Join(RequiredColumns, ", "), "|", " or "))
		}
	}
	if len(resources) == 0 {
		return nil, nil, fmt.Errorf("no resource column: give at least one of %s", strings.Join(slices.Sorted(maps.Keys(ResourceColumns)), ", "))
	}
	return cols, resources, nil
}

// fillTimes derives the time from elapsed_seconds, or elapsed_seconds
// from the time, when the file has only one of them.
func fillTimes(recs []Record, cols []csvColumn) {
	has := func(n string) bool {
		return slices.ContainsFunc(cols, func(c csvColumn) bool { return c.name == n })
	}
	switch {
	case len(recs) == 0 || (has("time") && has("elapsed_seconds")):
	case has("time"):
		t0 := recs[0].Time
		for i := range recs {
			recs[i].Elapsed = recs[i].Time.Sub(t0).Seconds()
		}
	default:
		for i := range recs {
			recs[i].Time = time.Unix(0, 0).UTC().Add(time.Duration(recs[i].Elapsed * float64(time.Second)))
		}
	}
}

// csvColumn is one column of a samples.csv being read.
type csvColumn struct {
	name string
	set  func(r *Record, cell string) error
}

// errEmpty is the error of an empty cell in a column that has no "not
// sampled" state.
var errEmpty = errors.New("empty: give a value in every row, or remove the column")

func parseUint(s string) (uint64, error) {
	if s == "" {
		return 0, errEmpty
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number >= 0", s)
	}
	return v, nil
}

func parseFloat(s string) (float64, error) {
	if s == "" {
		return 0, errEmpty
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// uintCol, intCol and floatCol set a field that every row holds.
func uintCol(f func(*Record) *uint64) func(*Record, string) error {
	return func(r *Record, s string) (err error) {
		*f(r), err = parseUint(s)
		return err
	}
}

func intCol(f func(*Record) *int) func(*Record, string) error {
	return func(r *Record, s string) error {
		v, err := parseUint(s)
		*f(r) = int(v)
		return err
	}
}

func floatCol(f func(*Record) *float64) func(*Record, string) error {
	return func(r *Record, s string) (err error) {
		*f(r), err = parseFloat(s)
		return err
	}
}

// optCol sets a field that is empty when it was not sampled; a value sets
// the field's group valid.
func optCol[T uint64 | int](f func(*Record) *T, valid func(*Record) *bool) func(*Record, string) error {
	return func(r *Record, s string) error {
		if s == "" {
			return nil
		}
		v, err := parseUint(s)
		*f(r), *valid(r) = T(v), true
		return err
	}
}

var columnSetters = map[string]func(*Record, string) error{
	"time": func(r *Record, s string) (err error) {
		if r.Time, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Errorf("%q is not an RFC 3339 time such as 2026-11-30T02:00:00Z", s)
		}
		return nil
	},
	"elapsed_seconds": floatCol(func(r *Record) *float64 { return &r.Elapsed }),
	"phase": func(r *Record, s string) (err error) {
		r.Phase, err = parsePhase(s)
		return err
	},
	"requests":    uintCol(func(r *Record) *uint64 { return &r.Requests }),
	"errors":      uintCol(func(r *Record) *uint64 { return &r.Errors }),
	"rate_rps":    floatCol(func(r *Record) *float64 { return &r.Rate }),
	"p50_seconds": floatCol(func(r *Record) *float64 { return &r.P50 }),
	"p99_seconds": floatCol(func(r *Record) *float64 { return &r.P99 }),
	"alive": func(r *Record, s string) (err error) {
		if r.Alive, err = strconv.ParseBool(s); err != nil {
			return fmt.Errorf("%q: want true or false", s)
		}
		return nil
	},
	"incarnation": intCol(func(r *Record) *int { return &r.Incarnation }),
	"root_pid": func(r *Record, s string) error {
		v, err := parseUint(s)
		r.RootPID = int32(v)
		return err
	},
	"procs":                   intCol(func(r *Record) *int { return &r.Procs }),
	"rss_bytes":               uintCol(func(r *Record) *uint64 { return &r.RSS }),
	"vms_bytes":               uintCol(func(r *Record) *uint64 { return &r.VMS }),
	"swap_bytes":              uintCol(func(r *Record) *uint64 { return &r.Swap }),
	"pss_bytes":               optCol(func(r *Record) *uint64 { return &r.PSS }, smapsValid),
	"uss_bytes":               optCol(func(r *Record) *uint64 { return &r.USS }, smapsValid),
	"fds":                     optCol(func(r *Record) *uint64 { return &r.FDs }, func(r *Record) *bool { return &r.FDsValid }),
	"fd_limit":                uintCol(func(r *Record) *uint64 { return &r.FDLimit }),
	"threads":                 uintCol(func(r *Record) *uint64 { return &r.Threads }),
	"cpu_user_seconds":        floatCol(func(r *Record) *float64 { return &r.CPUUser }),
	"cpu_system_seconds":      floatCol(func(r *Record) *float64 { return &r.CPUSystem }),
	"ctx_voluntary":           uintCol(func(r *Record) *uint64 { return &r.CtxVoluntary }),
	"ctx_involuntary":         uintCol(func(r *Record) *uint64 { return &r.CtxInvol }),
	"read_bytes":              optCol(func(r *Record) *uint64 { return &r.ReadBytes }, ioValid),
	"write_bytes":             optCol(func(r *Record) *uint64 { return &r.WriteBytes }, ioValid),
	"tcp_established":         optCol(func(r *Record) *int { return &r.TCPEstablished }, tcpValid),
	"tcp_close_wait":          optCol(func(r *Record) *int { return &r.TCPCloseWait }, tcpValid),
	"tcp_time_wait":           optCol(func(r *Record) *int { return &r.TCPTimeWait }, tcpValid),
	"tcp_listen":              optCol(func(r *Record) *int { return &r.TCPListen }, tcpValid),
	"mem_current_bytes":       optCol(func(r *Record) *uint64 { return &r.MemCurrent }, cgroupValid),
	"mem_max_bytes":           optCol(func(r *Record) *uint64 { return &r.MemMax }, cgroupValid),
	"mem_anon_bytes":          optCol(func(r *Record) *uint64 { return &r.MemAnon }, cgroupValid),
	"mem_file_bytes":          optCol(func(r *Record) *uint64 { return &r.MemFile }, cgroupValid),
	"self_cpu_user_seconds":   floatCol(func(r *Record) *float64 { return &r.SelfUser }),
	"self_cpu_system_seconds": floatCol(func(r *Record) *float64 { return &r.SelfSystem }),
	"self_rss_bytes":          uintCol(func(r *Record) *uint64 { return &r.SelfRSS }),
	"runqueue_wait_seconds":   optFloat(func(r *Record) *float64 { return &r.RunqueueWait }, func(r *Record) *bool { return &r.RunqueueValid }),
	"hot_thread_pid":          optPID(func(r *Record) *int32 { return &r.HotThreadPID }, hotValid),
	"hot_thread_tid":          optPID(func(r *Record) *int32 { return &r.HotThreadTID }, hotValid),
	"hot_thread_name":         strCol(func(r *Record) *string { return &r.HotThreadName }),
	"hot_thread_cpu":          optFloat(func(r *Record) *float64 { return &r.HotThreadCPU }, hotValid),
	"hot_thread_wait":         optFloat(func(r *Record) *float64 { return &r.HotThreadWait }, hotValid),
	"hot_proc_pid":            optPID(func(r *Record) *int32 { return &r.HotProcPID }, hotValid),
	"hot_proc_name":           strCol(func(r *Record) *string { return &r.HotProcName }),
	"hot_proc_cores":          optFloat(func(r *Record) *float64 { return &r.HotProcCores }, hotValid),
	"cpu_capacity_cores":      optFloat(func(r *Record) *float64 { return &r.CPUCapacity }, nil),
	"cpu_capacity_source":     strCol(func(r *Record) *string { return &r.CPUCapacitySource }),
	"host_cpu_busy_seconds":   optFloat(func(r *Record) *float64 { return &r.HostCPUBusy }, hostValid),
	"host_cpu_total_seconds":  optFloat(func(r *Record) *float64 { return &r.HostCPUTotal }, hostValid),
	"host_cpus":               optCol(func(r *Record) *int { return &r.HostCPUs }, hostValid),
}

func hotValid(r *Record) *bool  { return &r.HotValid }
func hostValid(r *Record) *bool { return &r.HostCPUValid }

// optFloat sets an optional float cell and, when valid is not nil, marks
// the reading present; an empty cell leaves both alone.
func optFloat(f func(*Record) *float64, valid func(*Record) *bool) func(*Record, string) error {
	return func(r *Record, s string) error {
		if s == "" {
			return nil
		}
		v, err := parseFloat(s)
		*f(r) = v
		if valid != nil {
			*valid(r) = true
		}
		return err
	}
}

// optPID sets an optional process or thread ID cell.
func optPID(f func(*Record) *int32, valid func(*Record) *bool) func(*Record, string) error {
	return func(r *Record, s string) error {
		if s == "" {
			return nil
		}
		v, err := parseUint(s)
		*f(r), *valid(r) = int32(v), true
		return err
	}
}

// strCol sets a text cell as it is.
func strCol(f func(*Record) *string) func(*Record, string) error {
	return func(r *Record, s string) error {
		*f(r) = s
		return nil
	}
}

func smapsValid(r *Record) *bool  { return &r.SmapsValid }
func ioValid(r *Record) *bool     { return &r.IOValid }
func tcpValid(r *Record) *bool    { return &r.TCPValid }
func cgroupValid(r *Record) *bool { return &r.CgroupValid }
