package model

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

// Column is one column of samples.csv: its name, which carries its unit,
// how a record's cell is written, and how it is read back.
type Column struct {
	Name string
	// Format writes the record's cell; "" when the record holds no
	// reading of it (PSS outside the smaps cadence, sockets outside
	// theirs, fds or I/O without permission, cgroup figures outside a
	// unit).
	Format func(Record) string
	// Parse sets the record's field from a cell; an empty cell in an
	// optional column leaves it unread.
	Parse func(r *Record, cell string) error
}

// Columns are samples.csv's columns, in the order soakd writes them: the
// load's and the tree's identity, then the resources (from Resources),
// then the other readings.
var Columns = slices.Concat(headColumns, resourceColumns(), tailColumns, partColumns())

// CSVHeader names the columns of samples.csv.
var CSVHeader = columnNames(Columns)

// resourceColumns are the resources' columns, in the table's order; a
// resource judged on a part of a reading (ResourceDef.Whole) has the
// whole's column here, where it has always been.
func resourceColumns() []Column {
	var cols []Column
	for _, r := range Resources {
		if r.Whole != nil {
			cols = append(cols, *r.Whole)
		} else {
			cols = append(cols, r.Column)
		}
	}
	return cols
}

// partColumns are the columns of the parts that resources with a Whole
// are judged on; they came later, so they come last.
func partColumns() []Column {
	var cols []Column
	for _, r := range Resources {
		if r.Whole != nil {
			cols = append(cols, r.Column)
		}
	}
	return cols
}

func columnNames(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
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

// RecordRow formats a record as a samples.csv row; values that were not
// read in a sample are empty cells.
func RecordRow(r Record) []string {
	row := make([]string, len(Columns))
	for i, c := range Columns {
		row[i] = c.Format(r)
	}
	return row
}

// WriteCSV writes the header and one row per record, in samples.csv's
// format.
func WriteCSV(w io.Writer, recs []Record) error {
	rw := NewRowWriter(w)
	if err := rw.Write(recs); err != nil {
		return err
	}
	return rw.Flush()
}

// RowWriter writes records in samples.csv's format a batch at a time, the
// header before the first batch (or at Flush, when there was none).
type RowWriter struct {
	cw        *csv.Writer
	header    bool
	endpoints int // requests_<n> columns, from the first record
}

// NewRowWriter returns a RowWriter on w.
func NewRowWriter(w io.Writer) *RowWriter { return &RowWriter{cw: csv.NewWriter(w)} }

// Write writes one row per record.
func (rw *RowWriter) Write(recs []Record) error {
	if !rw.header {
		rw.header = true
		for _, r := range recs {
			if k := len(r.EndpointRequests); k >= 2 {
				rw.endpoints = max(rw.endpoints, k)
			}
		}
		if err := rw.cw.Write(append(slices.Clone(CSVHeader), endpointColumns(rw.endpoints)...)); err != nil {
			return err
		}
	}
	for _, r := range recs {
		if err := rw.cw.Write(append(RecordRow(r), endpointCells(r, rw.endpoints)...)); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes the header if nothing was written yet, and flushes.
func (rw *RowWriter) Flush() error {
	if err := rw.Write(nil); err != nil {
		return err
	}
	rw.cw.Flush()
	return rw.cw.Error()
}

// CSVWriter appends records to samples.csv and their members to procs.csv
// and flushes both every sample, so that a run killed with -9 leaves every
// sample taken so far on disk.
type CSVWriter struct {
	samples, procs *csvFile
	endpoints      int // requests_<n> columns written; 0 with one endpoint
}

// CreateCSV creates samples.csv at path and procs.csv in the same
// directory.
func CreateCSV(path string) (*CSVWriter, error) { return CreateCSVEndpoints(path, 0) }

// CreateCSVEndpoints is CreateCSV for a load over endpoints endpoints:
// with two or more, samples.csv has a requests_<n> column for each.
func CreateCSVEndpoints(path string, endpoints int) (*CSVWriter, error) {
	samples, err := createCSVFile(path, append(slices.Clone(CSVHeader), endpointColumns(endpoints)...))
	if err != nil {
		return nil, err
	}
	procs, err := createCSVFile(filepath.Join(filepath.Dir(path), "procs.csv"), ProcsCSVHeader)
	if err != nil {
		samples.Close()
		return nil, err
	}
	return &CSVWriter{samples: samples, procs: procs, endpoints: endpoints}, nil
}

// Write appends one record to samples.csv and its members to procs.csv,
// and flushes both.
func (c *CSVWriter) Write(r Record) error {
	if err := c.samples.rows(append(RecordRow(r), endpointCells(r, c.endpoints)...)); err != nil {
		return err
	}
	if err := c.procs.rows(MemberRows(r)...); err != nil {
		return fmt.Errorf("procs.csv: %w", err)
	}
	return nil
}

// Close closes both files.
func (c *CSVWriter) Close() error { return errors.Join(c.samples.Close(), c.procs.Close()) }

// csvFile is one CSV file written as the run goes.
type csvFile struct {
	f *os.File
	w *csv.Writer
}

func createCSVFile(path string, header []string) (*csvFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
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
var ResourceColumns = func() map[string]string {
	m := make(map[string]string, len(Resources))
	for _, r := range Resources {
		m[r.Column.Name] = r.Name
		if r.Whole != nil {
			m[r.Whole.Name] = r.Name
		}
	}
	return m
}()

// ReadSamples reads records from a samples.csv, soakd's own or one made
// by hand: the header names the columns (those of CSVHeader, in any
// order; see RequiredColumns), and the resources returned are the report
// names of the resource columns present. A missing column reads as not
// sampled; without alive every row is alive, without incarnation every
// row is the first incarnation, without time the times count from zero,
// and without elapsed_seconds the seconds count from the first time.
// Errors name the line and the column and say what to do; the caller
// names the file.
//
// A last row cut short (the file ends without a line end, as a write
// stopped mid-row by a kill or a full disk leaves it) is left out: the
// complete rows come back with a *CutRowError, which a caller may take
// as a warning.
func ReadSamples(r io.Reader) ([]Record, []string, error) {
	lr := &lastByteReader{r: r}
	cr := csv.NewReader(lr)
	head, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("line 1: %w (want a header line naming the columns, e.g. %s)", err, strings.Join(CSVHeader[:4], ","))
	}
	cols, resources, err := headerColumns(head)
	if err != nil {
		return nil, nil, fmt.Errorf("line 1: %w", err)
	}
	elapsed := slices.ContainsFunc(cols, func(c Column) bool { return c.Name == "elapsed_seconds" })
	var recs []Record
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			if lr.cut() && len(recs) > 0 {
				// The last row parsed, but its last field may be
				// cut (a number short of its digits).
				recs = recs[:len(recs)-1]
				return finishSamples(recs, cols), resources, &CutRowError{Line: line - 1, Rows: len(recs)}
			}
			break
		}
		if err != nil {
			if lastRowCut(cr, lr) {
				return finishSamples(recs, cols), resources, &CutRowError{Line: line, Rows: len(recs)}
			}
			return recs, resources, fmt.Errorf("%w (every row needs the header's %d columns)", err, len(head))
		}
		rec := Record{Sample: probes.Sample{Alive: true, Incarnation: 1, RSSValid: true, ThreadsValid: true}}
		for i, c := range cols {
			if err := c.Parse(&rec, row[i]); err != nil {
				if lastRowCut(cr, lr) {
					return finishSamples(recs, cols), resources, &CutRowError{Line: line, Rows: len(recs)}
				}
				return recs, resources, fmt.Errorf("line %d: column %s: %w", line, c.Name, err)
			}
		}
		rec.RSSValid, rec.ThreadsValid = rec.RSSValid && rec.Alive, rec.ThreadsValid && rec.Alive
		if err := requestsForward(recs, rec, line); err != nil {
			return recs, resources, err
		}
		if err := timeForward(recs, rec, line, elapsed); err != nil {
			return recs, resources, err
		}
		recs = append(recs, rec)
	}
	return finishSamples(recs, cols), resources, nil
}

// finishSamples fills what the columns left out: the times, the
// endpoints' counts.
func finishSamples(recs []Record, cols []Column) []Record {
	fillTimes(recs, cols)
	padEndpoints(recs, cols)
	return recs
}

// CutRowError is ReadSamples' word that the file's last row was cut
// short and left out; the rows before it were read.
type CutRowError struct {
	Line int // the cut row's line
	Rows int // the complete rows read before it
}

func (e *CutRowError) Error() string {
	return fmt.Sprintf("line %d is cut short (the file ends without a line end, as a write stopped mid-row leaves it): left out; the %d complete %s before it are read",
		e.Line, e.Rows, map[bool]string{true: "row", false: "rows"}[e.Rows == 1])
}

// lastByteReader remembers the last byte read, so that a file that ends
// without a line end is known.
type lastByteReader struct {
	r    io.Reader
	last byte
	n    int64
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last, l.n = p[n-1], l.n+int64(n)
	}
	return n, err
}

// cut: the input, read to its end, did not end with a line end.
func (l *lastByteReader) cut() bool { return l.n > 0 && l.last != '\n' }

// lastRowCut: the row that just failed was the input's last and the
// input ends without a line end: a row cut short, not a bad one.
func lastRowCut(cr *csv.Reader, lr *lastByteReader) bool {
	_, err := cr.Read()
	return err == io.EOF && lr.cut()
}

// requestsForward rejects a row whose cumulative requests counter is
// below the previous row's: soakd counts its own completed requests, and
// they never decrease within a run, so a counter that goes back is two
// runs (or a target's restarted counter) joined in one file. Fitted as
// it is, the soak would run backwards.
func requestsForward(recs []Record, rec Record, line int) error {
	if len(recs) == 0 || rec.Requests >= recs[len(recs)-1].Requests {
		return nil
	}
	return fmt.Errorf("line %d: column requests: %d is below %d on line %d; the requests counter is cumulative and never decreases within a run: split the file at line %d into two files, each with the header line, and analyse each",
		line, rec.Requests, recs[len(recs)-1].Requests, line-1, line)
}

// timeForward rejects a row whose time is before the previous row's:
// elapsed_seconds when the file has it (soakd measures it on a monotonic
// clock; its time column is the wall clock, which a clock step may set
// back), else time. Fitted as it is, a soak could last minus an hour
// (issue 41: "in a soak of only -3599 s it reached 114 MiB").
func timeForward(recs []Record, rec Record, line int, elapsed bool) error {
	if len(recs) == 0 {
		return nil
	}
	prev := recs[len(recs)-1]
	const todo = "the samples of a run are in the order they were taken, and its time never goes back: put the rows in order, or, if two runs were joined, split the file at line %d into two files, each with the header line, and analyse each"
	switch {
	case elapsed && rec.Elapsed < prev.Elapsed:
		return fmt.Errorf("line %d: column elapsed_seconds: %s is below %s on line %d; "+todo,
			line, strconv.FormatFloat(rec.Elapsed, 'f', -1, 64), strconv.FormatFloat(prev.Elapsed, 'f', -1, 64), line-1, line)
	case !elapsed && rec.Time.Before(prev.Time):
		return fmt.Errorf("line %d: column time: %s is before %s on line %d; "+todo,
			line, rec.Time.Format(time.RFC3339Nano), prev.Time.Format(time.RFC3339Nano), line-1, line)
	}
	return nil
}

// headerColumns maps the header to its columns, and checks that the
// required ones are there.
func headerColumns(head []string) ([]Column, []string, error) {
	seen := map[string]bool{}
	eps := map[int]bool{}
	var cols []Column
	var resources []string
	for i, h := range head {
		name := strings.TrimSpace(h)
		col, ok := columnByName[name]
		if n, isEP := endpointIndex(name); isEP && !seen[name] {
			col, ok, eps[n] = endpointCol(n), true, true
		}
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("column %d %q is not a samples.csv column: rename it to one of %s, or remove it", i+1, name, strings.Join(CSVHeader, ", "))
		case seen[name]:
			return nil, nil, fmt.Errorf("column %d %q appears twice: keep one", i+1, name)
		}
		seen[name] = true
		cols = append(cols, col)
		if res, ok := ResourceColumns[name]; ok && !slices.Contains(resources, res) {
			resources = append(resources, res)
		}
	}
	for _, req := range RequiredColumns {
		if !slices.ContainsFunc(strings.Split(req, "|"), func(n string) bool { return seen[n] }) {
			return nil, nil, fmt.Errorf("no %s column: a samples.csv needs %s, and at least one resource column", strings.ReplaceAll(req, "|", " or "), strings.ReplaceAll(strings.Join(RequiredColumns, ", "), "|", " or "))
		}
	}
	if err := checkEndpointColumns(eps); err != nil {
		return nil, nil, err
	}
	if len(resources) == 0 {
		return nil, nil, fmt.Errorf("no resource column: give at least one of %s", strings.Join(slices.Sorted(maps.Keys(ResourceColumns)), ", "))
	}
	return cols, resources, nil
}

// fillTimes derives the time from elapsed_seconds, or elapsed_seconds
// from the time, when the file has only one of them.
func fillTimes(recs []Record, cols []Column) {
	has := func(n string) bool {
		return slices.ContainsFunc(cols, func(c Column) bool { return c.Name == n })
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

// parseTime parses a time cell. Its year in UTC must have four digits,
// as RFC 3339 writes it, so that the time can be written back.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("%q is not an RFC 3339 time such as 2026-11-30T02:00:00Z", s)
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return t, fmt.Errorf("%q is year %d in UTC: give a time between years 0 and 9999", s, y)
	}
	return t, nil
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

func formatUint(v uint64) string   { return strconv.FormatUint(v, 10) }
func formatInt(v int) string       { return strconv.Itoa(v) }
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// unsigned is the integer fields that columns hold.
type unsigned interface{ ~uint64 | ~int | ~int32 }

func formatUnsigned[T unsigned](v T) string {
	if u, ok := any(v).(uint64); ok {
		return formatUint(u)
	}
	return formatInt(int(v))
}

// uintCol is a whole-number column that every row holds.
func uintCol[T unsigned](name string, f func(*Record) *T) Column {
	return Column{Name: name,
		Format: func(r Record) string { return formatUnsigned(*f(&r)) },
		Parse: func(r *Record, s string) error {
			v, err := parseUint(s)
			*f(r) = T(v)
			return err
		}}
}

// floatCol is a number column that every row holds.
func floatCol(name string, f func(*Record) *float64) Column {
	return Column{Name: name,
		Format: func(r Record) string { return formatFloat(*f(&r)) },
		Parse: func(r *Record, s string) (err error) {
			*f(r), err = parseFloat(s)
			return err
		}}
}

// optCol is a whole-number column that is empty when the reading's group
// (valid) was not read; a value sets the group valid.
func optCol[T unsigned](name string, f func(*Record) *T, valid func(*Record) *bool) Column {
	return Column{Name: name,
		Format: func(r Record) string {
			if !*valid(&r) {
				return ""
			}
			return formatUnsigned(*f(&r))
		},
		Parse: func(r *Record, s string) error {
			if s == "" {
				return nil
			}
			v, err := parseUint(s)
			*f(r), *valid(r) = T(v), true
			return err
		}}
}

// optFloat is a number column that is empty when the reading's group was
// not read. With a nil valid, the field's own zero means unread.
func optFloat(name string, f func(*Record) *float64, valid func(*Record) *bool) Column {
	read := func(r *Record) bool {
		if valid == nil {
			return *f(r) > 0
		}
		return *valid(r)
	}
	return Column{Name: name,
		Format: func(r Record) string {
			if !read(&r) {
				return ""
			}
			return formatFloat(*f(&r))
		},
		Parse: func(r *Record, s string) error {
			if s == "" {
				return nil
			}
			v, err := parseFloat(s)
			*f(r) = v
			if valid != nil {
				*valid(r) = true
			}
			return err
		}}
}

// optStr is a text column that is empty when the reading's group was not
// read (or, with a nil valid, when the text is empty).
func optStr(name string, f func(*Record) *string, valid func(*Record) *bool) Column {
	return Column{Name: name,
		Format: func(r Record) string {
			if valid != nil && !*valid(&r) {
				return ""
			}
			return *f(&r)
		},
		Parse: func(r *Record, s string) error {
			*f(r) = s
			return nil
		}}
}

// flagCol is a column of a flag that is rarely set: "true" when set,
// empty otherwise.
func flagCol(name string, f func(*Record) *bool) Column {
	return Column{Name: name,
		Format: func(r Record) string {
			if *f(&r) {
				return "true"
			}
			return ""
		},
		Parse: func(r *Record, s string) (err error) {
			if s == "" {
				return nil
			}
			if *f(r), err = strconv.ParseBool(s); err != nil {
				return fmt.Errorf("%q: want true, false or nothing", s)
			}
			return nil
		}}
}

// extraCol holds a remote source's extra gauges (probes.Sample.Extra) in
// one cell, as NAME=VALUE pairs joined by ";" in name order: their names
// are the user's (--probe-metric), so they have no columns of their own.
var extraCol = Column{Name: "extra",
	Format: func(r Record) string {
		parts := make([]string, 0, len(r.Extra))
		for _, n := range slices.Sorted(maps.Keys(r.Extra)) {
			parts = append(parts, n+"="+formatFloat(r.Extra[n]))
		}
		return strings.Join(parts, ";")
	},
	Parse: func(r *Record, s string) error {
		if s == "" {
			return nil
		}
		r.Extra = map[string]float64{}
		for _, p := range strings.Split(s, ";") {
			n, v, ok := strings.Cut(p, "=")
			f, err := strconv.ParseFloat(v, 64)
			if !ok || n == "" || err != nil {
				return fmt.Errorf("%q: want NAME=NUMBER pairs joined by ;", p)
			}
			r.Extra[n] = f
		}
		return nil
	}}

func smapsValid(r *Record) *bool  { return &r.SmapsValid }
func ioValid(r *Record) *bool     { return &r.IOValid }
func tcpValid(r *Record) *bool    { return &r.TCPValid }
func cgroupValid(r *Record) *bool { return &r.CgroupValid }
func hotValid(r *Record) *bool    { return &r.HotValid }
func hostValid(r *Record) *bool   { return &r.HostCPUValid }
func runqValid(r *Record) *bool   { return &r.RunqueueValid }

// headColumns come first: the time, the load, and the tree's identity.
var headColumns = []Column{
	{Name: "time",
		Format: func(r Record) string { return r.Time.UTC().Format(time.RFC3339Nano) },
		Parse: func(r *Record, s string) (err error) {
			r.Time, err = parseTime(s)
			return err
		}},
	floatCol("elapsed_seconds", func(r *Record) *float64 { return &r.Elapsed }),
	{Name: "phase",
		Format: func(r Record) string { return PhaseName(r.Phase) },
		Parse: func(r *Record, s string) (err error) {
			r.Phase, err = parsePhase(s)
			return err
		}},
	uintCol("requests", func(r *Record) *uint64 { return &r.Requests }),
	uintCol("errors", func(r *Record) *uint64 { return &r.Errors }),
	floatCol("rate_rps", func(r *Record) *float64 { return &r.Rate }),
	floatCol("p50_seconds", func(r *Record) *float64 { return &r.P50 }),
	floatCol("p99_seconds", func(r *Record) *float64 { return &r.P99 }),
	{Name: "alive",
		Format: func(r Record) string { return strconv.FormatBool(r.Alive) },
		Parse: func(r *Record, s string) (err error) {
			if r.Alive, err = strconv.ParseBool(s); err != nil {
				return fmt.Errorf("%q: want true or false", s)
			}
			return nil
		}},
	uintCol("incarnation", func(r *Record) *int { return &r.Incarnation }),
	uintCol("root_pid", func(r *Record) *int32 { return &r.RootPID }),
	uintCol("procs", func(r *Record) *int { return &r.Procs }),
}

// tailColumns are the readings that are not resources the analysis fits.
var tailColumns = []Column{
	uintCol("vms_bytes", func(r *Record) *uint64 { return &r.VMS }),
	uintCol("swap_bytes", func(r *Record) *uint64 { return &r.Swap }),
	uintCol("fd_limit", func(r *Record) *uint64 { return &r.FDLimit }),
	floatCol("cpu_user_seconds", func(r *Record) *float64 { return &r.CPUUser }),
	floatCol("cpu_system_seconds", func(r *Record) *float64 { return &r.CPUSystem }),
	uintCol("ctx_voluntary", func(r *Record) *uint64 { return &r.CtxVoluntary }),
	uintCol("ctx_involuntary", func(r *Record) *uint64 { return &r.CtxInvol }),
	optCol("read_bytes", func(r *Record) *uint64 { return &r.ReadBytes }, ioValid),
	optCol("write_bytes", func(r *Record) *uint64 { return &r.WriteBytes }, ioValid),
	optCol("tcp_established", func(r *Record) *int { return &r.TCPEstablished }, tcpValid),
	optCol("tcp_time_wait", func(r *Record) *int { return &r.TCPTimeWait }, tcpValid),
	optCol("tcp_listen", func(r *Record) *int { return &r.TCPListen }, tcpValid),
	optCol("mem_current_bytes", func(r *Record) *uint64 { return &r.MemCurrent }, cgroupValid),
	optCol("mem_max_bytes", func(r *Record) *uint64 { return &r.MemMax }, cgroupValid),
	optCol("mem_file_bytes", func(r *Record) *uint64 { return &r.MemFile }, cgroupValid),
	floatCol("self_cpu_user_seconds", func(r *Record) *float64 { return &r.SelfUser }),
	floatCol("self_cpu_system_seconds", func(r *Record) *float64 { return &r.SelfSystem }),
	uintCol("self_rss_bytes", func(r *Record) *uint64 { return &r.SelfRSS }),
	optFloat("runqueue_wait_seconds", func(r *Record) *float64 { return &r.RunqueueWait }, runqValid),
	optCol("hot_thread_pid", func(r *Record) *int32 { return &r.HotThreadPID }, hotValid),
	optCol("hot_thread_tid", func(r *Record) *int32 { return &r.HotThreadTID }, hotValid),
	optStr("hot_thread_name", func(r *Record) *string { return &r.HotThreadName }, hotValid),
	optFloat("hot_thread_cpu", func(r *Record) *float64 { return &r.HotThreadCPU }, hotValid),
	optFloat("hot_thread_wait", func(r *Record) *float64 { return &r.HotThreadWait }, hotValid),
	optCol("hot_proc_pid", func(r *Record) *int32 { return &r.HotProcPID }, hotValid),
	optStr("hot_proc_name", func(r *Record) *string { return &r.HotProcName }, hotValid),
	optFloat("hot_proc_cores", func(r *Record) *float64 { return &r.HotProcCores }, hotValid),
	optFloat("cpu_capacity_cores", func(r *Record) *float64 { return &r.CPUCapacity }, nil),
	optStr("cpu_capacity_source", func(r *Record) *string { return &r.CPUCapacitySource }, nil),
	optFloat("host_cpu_busy_seconds", func(r *Record) *float64 { return &r.HostCPUBusy }, hostValid),
	optFloat("host_cpu_total_seconds", func(r *Record) *float64 { return &r.HostCPUTotal }, hostValid),
	optCol("host_cpus", func(r *Record) *int { return &r.HostCPUs }, hostValid),
	optCol("read_chars", func(r *Record) *uint64 { return &r.ReadChars }, ioValid),
	optCol("write_chars", func(r *Record) *uint64 { return &r.WriteChars }, ioValid),
	unreadCol("no_rss", rssValid),
	unreadCol("no_threads", threadsValid),
	flagCol("no_cpu", func(r *Record) *bool { return &r.NoCPU }),
	flagCol("cpu_split_unknown", func(r *Record) *bool { return &r.CPUSplitUnknown }),
	extraCol,
	optCol("root_start_ticks", func(r *Record) *uint64 { return &r.RootStart }, func(r *Record) *bool { return new(r.RootStart > 0) }),
	optCol("stopped_procs", func(r *Record) *int { return &r.Stopped }, func(r *Record) *bool { return new(r.Stopped > 0) }),
	flagCol("root_stopped", func(r *Record) *bool { return &r.RootStopped }),
}

// columnByName finds a column of samples.csv by its name.
var columnByName = func() map[string]Column {
	m := make(map[string]Column, len(Columns))
	for _, c := range Columns {
		m[c.Name] = c
	}
	return m
}()
