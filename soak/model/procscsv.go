package model

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

// ProcsCSVHeader names the columns of procs.csv: one row per live process
// of the tree per sample (probes.Sample.Members), the first five columns
// repeating the sample's. A process is the pair {pid, start_ticks}.
var ProcsCSVHeader = []string{
	"time", "elapsed_seconds", "phase", "requests", "incarnation",
	"pid", "start_ticks", "ppid", "name", "rss_bytes", "fds", "threads", "cpu_seconds",
	"load_conns",
}

// procsCSVOldColumns is the number of columns of a procs.csv written
// before load_conns: such a file reads with every member's LoadConns
// missing.
const procsCSVOldColumns = 13

// MemberRows formats a record's members as procs.csv rows; fds is empty
// when the process's fds were not readable, load_conns when the
// connections to soakd were not counted (probes.Member.LoadConnsValid).
func MemberRows(r Record) [][]string {
	if len(r.Members) == 0 {
		return nil
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	t, el, ph, req, inc := r.Time.UTC().Format(time.RFC3339Nano), f(r.Elapsed), PhaseName(r.Phase), u(r.Requests), strconv.Itoa(r.Incarnation)
	rows := make([][]string, len(r.Members))
	for i, m := range r.Members {
		fds := u(m.FDs)
		if m.NoFDs {
			fds = ""
		}
		conns := u(m.LoadConns)
		if !m.LoadConnsValid {
			conns = ""
		}
		rows[i] = []string{t, el, ph, req, inc,
			strconv.Itoa(int(m.PID)), u(m.Start), strconv.Itoa(int(m.PPID)), m.Name,
			u(m.RSS), fds, u(m.Threads), f(m.CPU), conns}
	}
	return rows
}

// WriteProcsCSV writes the header and every record's members, in
// procs.csv's format.
func WriteProcsCSV(w io.Writer, recs []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ProcsCSVHeader); err != nil {
		return err
	}
	for _, r := range recs {
		if err := cw.WriteAll(MemberRows(r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ProcRow is one row of procs.csv: a member of the tree and the sample it
// was seen in.
type ProcRow struct {
	Time        time.Time
	Elapsed     float64
	Phase       verdict.Phase
	Requests    uint64
	Incarnation int
	probes.Member
}

// ReadProcsCSV reads the rows of a procs.csv, checking the header. Errors
// name the line. A file written before the load_conns column reads with
// every member's LoadConns missing.
func ReadProcsCSV(r io.Reader) ([]ProcRow, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("procs.csv: line 1: %w", err)
	}
	if len(head) != len(ProcsCSVHeader) && len(head) != procsCSVOldColumns {
		return nil, fmt.Errorf("procs.csv: line 1: %d columns, want %d (%s)", len(head), len(ProcsCSVHeader), strings.Join(ProcsCSVHeader, ","))
	}
	cr.FieldsPerRecord = len(head)
	for i, h := range ProcsCSVHeader[:len(head)] {
		if head[i] != h {
			return nil, fmt.Errorf("procs.csv: line 1: column %d is %q, want %q", i+1, head[i], h)
		}
	}
	var rows []ProcRow
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, fmt.Errorf("procs.csv: %w", err)
		}
		pr, err := parseProcRow(row)
		if err != nil {
			line, _ := cr.FieldPos(0)
			return rows, fmt.Errorf("procs.csv: line %d: %w", line, err)
		}
		rows = append(rows, pr)
	}
}

func parseProcRow(row []string) (ProcRow, error) {
	p := &rowParser{head: ProcsCSVHeader, row: row}
	var r ProcRow
	t, err := parseTime(p.next())
	if err != nil {
		p.fail(err)
	}
	r.Time = t
	r.Elapsed = p.f()
	if r.Phase, err = parsePhase(p.next()); err != nil {
		p.fail(err)
	}
	r.Requests, r.Incarnation = p.u(), p.n()
	r.PID, r.Start, r.PPID = p.pid(), p.u(), p.pid()
	r.Name = p.next()
	r.RSS = p.u()
	var ok bool
	r.FDs, ok = p.ou()
	r.NoFDs = !ok
	r.Threads, r.CPU = p.u(), p.f()
	if len(row) > procsCSVOldColumns {
		r.LoadConns, r.LoadConnsValid = p.ou()
	}
	return r, p.err
}

// pid reads a process ID cell.
func (p *rowParser) pid() int32 {
	v, err := strconv.ParseInt(p.next(), 10, 32)
	if err != nil {
		p.fail(err)
	}
	return int32(v)
}

// AttachMembers puts procs.csv rows back onto the records read from the
// same run's samples.csv: each row joins the record of the same time, and
// must agree with it on the elapsed seconds. Records keep their members
// in the rows' order. A row with no such record is an error naming its
// time.
func AttachMembers(recs []Record, rows []ProcRow) error {
	at := make(map[int64]int, len(recs))
	for i := range recs {
		recs[i].Members = nil
		at[recs[i].Time.UnixNano()] = i
	}
	for n, row := range rows {
		i, ok := at[row.Time.UnixNano()]
		if !ok || recs[i].Elapsed != row.Elapsed {
			return fmt.Errorf("procs.csv: row %d (time %s, %g s): no sample at that time in samples.csv",
				n+1, row.Time.UTC().Format(time.RFC3339Nano), row.Elapsed)
		}
		recs[i].Members = append(recs[i].Members, row.Member)
	}
	return nil
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
