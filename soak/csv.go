package soak

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// ReadCSV reads records back from a samples.csv, checking the header.
// Errors name the line.
func ReadCSV(r io.Reader) ([]Record, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(CSVHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("samples.csv: line 1: %w", err)
	}
	for i, h := range CSVHeader {
		if head[i] != h {
			return nil, fmt.Errorf("samples.csv: line 1: column %d is %q, want %q", i+1, head[i], h)
		}
	}
	var recs []Record
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, fmt.Errorf("samples.csv: %w", err)
		}
		rec, err := parseRow(row)
		if err != nil {
			return recs, fmt.Errorf("samples.csv: line %d: %w", line, err)
		}
		recs = append(recs, rec)
	}
}

// rowParser reads the cells of one row in order, keeping the first error.
type rowParser struct {
	head []string // the file's header, to name a column in errors
	row  []string
	i    int
	err  error
}

func (p *rowParser) next() string {
	s := p.row[p.i]
	p.i++
	return s
}

func (p *rowParser) fail(err error) {
	if p.err == nil {
		p.err = fmt.Errorf("column %s: %w", p.head[p.i-1], err)
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

// on reads an optional whole-number cell; empty is 0.
func (p *rowParser) on() int {
	v, _ := p.ou()
	return int(v)
}

func parseRow(row []string) (Record, error) {
	p := &rowParser{head: CSVHeader, row: row}
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
	return r, p.err
}
