// Package web renders soakd's HTML: the self-contained run report with its
// SVG charts (written as report.html and served for every stored run), the
// daemon's index of jobs and runs, and the comparison of two runs. Pages are
// server-rendered with html/template and load nothing from anywhere: the
// CSS and the SVG charts are inline, and there is no script.
package web

import (
	"embed"
	"fmt"
	"github.com/soakd/soakd/soak/compare"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// PageOptions set a run page's frame.
type PageOptions struct {
	Title string // default "soakd run report"
	// Live marks a run in progress: the page refreshes itself every
	// RefreshSeconds (default 5) with a meta refresh.
	Live           bool
	RefreshSeconds int
	RunID          int64 // shown when non-zero
	Job            string
	Links          []Link // navigation, e.g. back to the index
	// Charts, when set, are drawn instead of charts of rep.Records: a
	// running run's page reuses the charts of its latest live analysis
	// (RenderCharts) on every reload until the next analysis.
	Charts *Charts
	// EvidenceBase prefixes the names of the run's evidence files in
	// their download links (default "evidence/", beside report.html in
	// --out DIR).
	EvidenceBase string
	// Baseline is the run's comparison with its job's baseline, when it
	// has one; Pin, when set, shows the button that pins the run as the
	// job's baseline.
	Baseline *Judgement
	Pin      *PinButton
	// Status is the stored run's status (completed, stopped, failed,
	// interrupted; "" outside the daemon), and Error its stored error: a
	// run that did not complete says so, and why, above its verdict.
	Status string
	Error  string
}

// Ended is the sentence that says a run did not complete, or "" when it
// did (or is running, or is no daemon run).
func (o PageOptions) Ended() string {
	var s string
	switch o.Status {
	case "interrupted":
		s = "This run was interrupted"
	case "stopped":
		s = "This run was stopped before its end"
	case "failed":
		s = "This run failed"
	default:
		return ""
	}
	if o.Error != "" {
		return s + ": " + strings.TrimSuffix(o.Error, ".") + "."
	}
	return s + ". The verdict below covers the samples stored until then."
}

// Charts are a run's rendered charts, for PageOptions.Charts.
type Charts struct{ list []chart }

// RenderCharts renders the charts of rep, as RunReport would.
func RenderCharts(rep *model.Report) (*Charts, error) {
	list, err := runCharts(rep)
	if err != nil {
		return nil, fmt.Errorf("run report: %w", err)
	}
	return &Charts{list: list}, nil
}

// Link is one navigation link.
type Link struct {
	Text, Href string
}

// JobView is one job on the index page.
type JobView struct {
	Name, Schedule string    // Schedule "": the job runs only on request
	Next           time.Time // zero: not scheduled
	LastVerdict    string    // "" when the job never ran
	LastRunID      int64
	Running        bool
}

// RunView is one run in the index's list and a side of a comparison.
type RunView struct {
	ID                   int64
	Job, Status, Verdict string
	Started              time.Time
	Duration             time.Duration
	Requests             uint64
	RSSPerRequest        float64 // bytes per request
}

// IndexData is the index page's content.
type IndexData struct {
	Title string // default "soakd"
	Jobs  []JobView
	Runs  []RunView
	Now   time.Time
}

//go:embed templates/*.html templates/style.css
var files embed.FS

// pages holds the parsed templates. It is read-only after init.
var pages = template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))

var style = template.CSS(mustRead("templates/style.css"))

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var funcs = template.FuncMap{
	"badge":    badgeOf,
	"value":    units.Amount,
	"seconds":  model.FormatSeconds,
	"long":     model.FormatDuration,
	"ms":       func(s float64) string { return fmt.Sprintf("%.3f", 1000*s) },
	"pct":      percent,
	"share":    share,
	"perrange": units.Range,
	"f":        func(prec int, v float64) string { return fmt.Sprintf("%.*f", prec, v) },
	"when":     formatTime,
	"dur":      formatDur,
	"perreq":   units.Amount,
	"released": released,
	"phase":    func(p verdict.Phase) string { return model.PhaseName(p) },
	"upper":    strings.ToUpper,
	"mode":     loadMode,
	"deref":    func(p *float64) float64 { return *p },
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func formatDur(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return d.Round(time.Second).String()
}

// percent formats a share as a whole percentage; a share that rounds to
// zero is "0 %", never "-0 %".
func percent(f float64) string {
	p := math.Round(100 * f)
	if p == 0 {
		p = 0 // drop the sign of -0
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + " %"
}

// share is a small share as a percentage with three significant digits
// (an error rate of 0.05 % is not 0 %).
func share(f float64) string {
	return strconv.FormatFloat(100*f, 'g', 3, 64) + " %"
}

func released(b *bool) string {
	switch {
	case b == nil:
		return "no cool-down"
	case *b:
		return "yes"
	}
	return "no"
}

// badge is a verdict shown with a colour, an icon and a word, so that
// colour is never the only cue.
type badge struct {
	Class, Icon, Word string
}

func badgeOf(v string) badge {
	if w, ok := verdict.WordOf(v); ok {
		return badge{string(w.Tone), w.Icon, v}
	}
	switch v {
	case "failed":
		return badge{"bad", "✗", v}
	case compare.Regressed:
		return badge{"bad", "✗", v}
	case compare.Same, compare.Improved:
		return badge{"good", "✓", v}
	case "completed":
		return badge{"plain", "■", v}
	case "stopped", "interrupted", "below rate":
		return badge{"warn", "!", v}
	case "running", "live":
		return badge{"info", "●", v}
	case "cpu":
		return badge{"info", "▲", "CPU-bound"}
	case "io":
		return badge{"info", "◇", "waits on I/O"}
	case "client":
		return badge{"warn", "◆", "client-bound"}
	case compare.Unjudged:
		return badge{"none", "·", v}
	case "":
		return badge{"none", "–", "none"}
	case "absent":
		return badge{"none", "–", "absent"}
	}
	return badge{"unknown", "?", v}
}

// frame is what every page template gets besides its content.
type frame struct {
	Title   string
	Style   template.CSS
	Refresh int // seconds; 0: no refresh
	Links   []Link
}

// reportPage is the run page's content.
type reportPage struct {
	frame
	Opt     PageOptions
	Rep     *model.Report
	Rows    []resourceRow
	Exhaust []resourceRow
	// Endpoints split each resource's growth between the load's
	// endpoints (see endpointRows); empty with one endpoint.
	Endpoints []endpointRow
	// Absent are the resources a remote probe source cannot see, each
	// with why (model.RemoteInfo.Absent), in name order.
	Absent   []absentRow
	Charts   []chart
	Errors   []count
	Statuses []count
	Where    *whereView // nil: nothing looked at
}

// absentRow is a named text: an absent resource and why.
type absentRow struct{ Name, Why string }

type resourceRow struct {
	Name string
	verdict.Resource
}

// Decided is the interval the verdict rests on: a leak's leak_ci95, else
// the reported one. The table shows it, so that a leak never sits
// beside an interval from below zero.
func (r resourceRow) Decided() [2]float64 {
	if r.LeakCI95 != nil {
		return *r.LeakCI95
	}
	return r.CI95
}

// Wider says whether the reported interval is wider than Decided: a
// leak's in a report made before issue 41, whose ci95 also spanned the
// second half's; the table names it then.
func (r resourceRow) Wider() bool { return r.Decided() != r.CI95 }

// Half is a leak's second half's own interval when it reaches outside
// Decided (the table names it beneath, as the second half's alone); nil
// otherwise.
func (r resourceRow) Half() *[2]float64 {
	h, d := r.SecondHalf, r.Decided()
	if h == nil || h.CI95[0] >= d[0] && h.CI95[1] <= d[1] {
		return nil
	}
	return &h.CI95
}

type count struct {
	Name string
	N    uint64
}

// RunReport writes the run's whole report page: the verdict block, the
// charts from rep.Records, and the tables.
func RunReport(w io.Writer, rep *model.Report, opt PageOptions) error {
	if rep == nil {
		return fmt.Errorf("run report: no report")
	}
	charts := opt.Charts
	if charts == nil {
		var err error
		if charts, err = RenderCharts(rep); err != nil {
			return err
		}
	}
	d := reportPage{frame: newFrame(opt.Title, "soakd run report", opt.Links), Opt: opt, Rep: rep, Charts: charts.list}
	if opt.Live {
		d.Refresh = opt.RefreshSeconds
		if d.Refresh <= 0 {
			d.Refresh = 5
		}
	}
	for _, n := range rep.ResourceNames() {
		row := resourceRow{Name: n, Resource: rep.Resources[n]}
		d.Rows = append(d.Rows, row)
		if row.Limit > 0 || row.TimeToExhaustionSeconds != nil {
			d.Exhaust = append(d.Exhaust, row)
		}
	}
	d.Endpoints = endpointRows(rep)
	base := opt.EvidenceBase
	if base == "" {
		base = model.EvidenceDir + "/"
	}
	d.Where = newWhereView(rep, base)
	if ri := rep.Target.Remote; ri != nil {
		for _, n := range slices.Sorted(maps.Keys(ri.Absent)) {
			d.Absent = append(d.Absent, absentRow{n, ri.Absent[n]})
		}
	}
	if rep.Load != nil {
		d.Errors, d.Statuses = counts(rep.Load.ErrorsByCause), counts(rep.Load.StatusClasses)
	}
	return execute(w, "report.html", d)
}

func newFrame(title, def string, links []Link) frame {
	if title == "" {
		title = def
	}
	return frame{Title: title, Style: style, Links: links}
}

// counts sorts a count map by count, largest first, then by name.
func counts(m map[string]uint64) []count {
	out := make([]count, 0, len(m))
	for k, v := range m {
		out = append(out, count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func execute(w io.Writer, name string, data any) error {
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		return fmt.Errorf("rendering %s: %w", name, err)
	}
	return nil
}

// indexPage is the index's content.
type indexPage struct {
	frame
	Jobs []JobView
	Runs []RunView
	Now  time.Time
}

// Index writes the daemon's index: the jobs with their schedule, next run
// and last verdict, and the runs with a form to compare two of them
// (GET /compare?a=ID&b=ID).
func Index(w io.Writer, d IndexData) error {
	return execute(w, "index.html", indexPage{frame: newFrame(d.Title, "soakd", nil), Jobs: d.Jobs, Runs: d.Runs, Now: d.Now})
}

// comparePage is the comparison's content.
type comparePage struct {
	frame
	A, B   side
	Sides  []side
	Chart  chart
	Slopes []slopeRow
	Judged *Judgement
}

type side struct {
	Label string
	View  RunView
	Rep   *model.Report
}

type slopeRow struct {
	Name  string
	A, B  *verdict.Resource
	Ratio string
}

// Compare writes the comparison of two runs: the judgement of B against A
// (when judged is set), their verdicts and slopes side by side, and one
// chart with both runs' RSS against requests.
func Compare(w io.Writer, a, b *model.Report, av, bv RunView, judged *Judgement) error {
	if a == nil || b == nil {
		return fmt.Errorf("compare: both runs need a report")
	}
	c, err := compareChart(a, b, av, bv)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	d := comparePage{
		frame: newFrame(fmt.Sprintf("soakd: run %d against run %d", av.ID, bv.ID), "", []Link{{"All runs", "/"}}),
		A:     side{"A", av, a}, B: side{"B", bv, b}, Chart: c, Slopes: slopeRows(a, b), Judged: judged,
	}
	d.Sides = []side{d.A, d.B}
	return execute(w, "compare.html", d)
}

func slopeRows(a, b *model.Report) []slopeRow {
	names := a.ResourceNames()
	for _, n := range b.ResourceNames() {
		if _, ok := a.Resources[n]; !ok {
			names = append(names, n)
		}
	}
	var out []slopeRow
	for _, n := range names {
		row := slopeRow{Name: n}
		if r, ok := a.Resources[n]; ok {
			row.A = &r
		}
		if r, ok := b.Resources[n]; ok {
			row.B = &r
		}
		if row.A != nil && row.B != nil && row.A.PerRequest != 0 {
			row.Ratio = fmt.Sprintf("%.2f×", row.B.PerRequest/row.A.PerRequest)
		}
		out = append(out, row)
	}
	return out
}

// loadMode describes the load's loop in words.
func loadMode(s *load.Summary) string {
	if s.Mode == "open" {
		return fmt.Sprintf("open loop, %.1f req/s target, up to %d in flight", s.TargetRate, s.Concurrency)
	}
	return fmt.Sprintf("closed loop, %d workers", s.Concurrency)
}
