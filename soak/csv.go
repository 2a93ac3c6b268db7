package soak

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

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
	// Added after the first release: ReadCSV takes files that end earlier.
	"runqueue_wait_seconds",
	"hot_thread_pid", "hot_thread_tid", "hot_thread_name", "hot_thread_cpu", "hot_thread_wait",
	"hot_proc_pid", "hot_proc_name", "hot_proc_cores",
	"cpu_capacity_cores", "cpu_capacity_source",
	"host_cpu_busy_seconds", "host_cpu_total_seconds", "host_cpus",
}

// csvFirstColumns is how many columns the first release of samples.csv
// had; ReadCSV reads files with any prefix of CSVHeader at least as long.
const csvFirstColumns = 37

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

// csvWriter appends records to samples.csv and flushes every row, so that
// a run killed with -9 leaves every sample taken so far on disk.
type csvWriter struct {
	f *os.File
	w *csv.Writer
}

func createCSV(path string) (*csvWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	c := &csvWriter{f: f, w: csv.NewWriter(f)}
	if err := c.row(CSVHeader); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

func (c *csvWriter) row(cells []string) error {
	if err := c.w.Write(cells); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

// Write appends one record and flushes it to the file.
func (c *csvWriter) Write(r Record) error { return c.row(RecordRow(r)) }

// Close closes the file.
func (c *csvWriter) Close() error { return c.f.Close() }

// ReadCSV reads records back from a samples.csv, checking the header.
// A file written before the last columns were added (its header a prefix
// of CSVHeader) reads with those cells empty. Errors name the line.
func ReadCSV(r io.Reader) ([]Record, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("samples.csv: line 1: %w", err)
	}
	if len(head) < csvFirstColumns || len(head) > len(CSVHeader) {
		return nil, fmt.Errorf("samples.csv: line 1: %d columns, want %d to %d", len(head), csvFirstColumns, len(CSVHeader))
	}
	for i, h := range head {
		if h != CSVHeader[i] {
			return nil, fmt.Errorf("samples.csv: line 1: column %d is %q, want %q", i+1, h, CSVHeader[i])
		}
	}
	cr.FieldsPerRecord = len(head)
	pad := make([]string, len(CSVHeader)-len(head))
	var recs []Record
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, fmt.Errorf("samples.csv: %w", err)
		}
		rec, err := parseRow(append(row, pad...))
		if err != nil {
			return recs, fmt.Errorf("samples.csv: line %d: %w", line, err)
		}
		recs = append(recs, rec)
	}
}

// rowParser reads the cells of one row in order, keeping the first error.
type rowParser struct {
	row []string
	i   int
	err error
}

func (p *rowParser) next() string {
	s := p.row[p.i]
	p.i++
	return s
}

func (p *rowParser) fail(err error) {
	if p.err == nil {
		p.err = fmt.Errorf("column %s: %w", CSVHeader[p.i-1], err)
	}
}

func (p *rowParser) u() uint64 {
	v, err := strconv.ParseUint(p.next(), 10, 64)
	if err != nil {
		p.fail(err)
	}
	return v
}

// ou reads an optional unsigned cell; ok is false when it is empty.
func (p *rowParser) ou() (uint64, bool) {
	if p.row[p.i] == "" {
		p.i++
		return 0, false
	}
	return p.u(), true
}

func (p *rowParser) f() float64 {
	v, err := strconv.ParseFloat(p.next(), 64)
	if err != nil {
		p.fail(err)
	}
	return v
}

func (p *rowParser) n() int { return int(p.u()) }

// of reads an optional float cell; ok is false when it is empty.
func (p *rowParser) of() (float64, bool) {
	if p.row[p.i] == "" {
		p.i++
		return 0, false
	}
	return p.f(), true
}

// on reads an optional whole-number cell; empty is 0.
func (p *rowParser) on() int {
	v, _ := p.ou()
	return int(v)
}

func parseRow(row []string) (Record, error) {
	p := &rowParser{row: row}
	var r Record
	t, err := time.Parse(time.RFC3339Nano, p.next())
	if err != nil {
		p.fail(err)
	}
	r.Time = t
	r.Elapsed = p.f()
	if r.Phase, err = parsePhase(p.next()); err != nil {
		p.fail(err)
	}
	r.Requests, r.Errors = p.u(), p.u()
	r.Rate, r.P50, r.P99 = p.f(), p.f(), p.f()
	if r.Alive, err = strconv.ParseBool(p.next()); err != nil {
		p.fail(err)
	}
	r.Incarnation, r.RootPID, r.Procs = p.n(), int32(p.n()), p.n()
	r.RSS, r.VMS, r.Swap = p.u(), p.u(), p.u()
	r.PSS, r.SmapsValid = p.ou()
	r.USS, _ = p.ou()
	r.FDs, r.FDsValid = p.ou()
	r.FDLimit, r.Threads = p.u(), p.u()
	r.CPUUser, r.CPUSystem = p.f(), p.f()
	r.CtxVoluntary, r.CtxInvol = p.u(), p.u()
	r.ReadBytes, r.IOValid = p.ou()
	r.WriteBytes, _ = p.ou()
	var est uint64
	est, r.TCPValid = p.ou()
	r.TCPEstablished = int(est)
	r.TCPCloseWait, r.TCPTimeWait, r.TCPListen = p.on(), p.on(), p.on()
	r.MemCurrent, r.CgroupValid = p.ou()
	r.MemMax, _ = p.ou()
	r.MemAnon, _ = p.ou()
	r.MemFile, _ = p.ou()
	r.SelfUser, r.SelfSystem, r.SelfRSS = p.f(), p.f(), p.u()
	r.RunqueueWait, r.RunqueueValid = p.of()
	parseCPUCells(p, &r)
	return r, p.err
}

// parseCPUCells reads the busiest-thread, capacity and machine cells.
func parseCPUCells(p *rowParser, r *Record) {
	var pid, tid uint64
	pid, r.HotValid = p.ou()
	tid, _ = p.ou()
	r.HotThreadPID, r.HotThreadTID = int32(pid), int32(tid)
	r.HotThreadName = p.next()
	r.HotThreadCPU, _ = p.of()
	r.HotThreadWait, _ = p.of()
	pid, _ = p.ou()
	r.HotProcPID = int32(pid)
	r.HotProcName = p.next()
	r.HotProcCores, _ = p.of()
	r.CPUCapacity, _ = p.of()
	r.CPUCapacitySource = p.next()
	r.HostCPUBusy, r.HostCPUValid = p.of()
	r.HostCPUTotal, _ = p.of()
	r.HostCPUs = p.on()
}
