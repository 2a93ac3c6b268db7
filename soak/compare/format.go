package compare

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/soakd/soakd/soak/units"
)

// Cells are a metric's figures as the text, the Markdown table and the
// pages show them.
type Cells struct {
	Old, New, Difference, CI95, Margin string
}

// Cells formats the metric: slopes in their unit per request, latency in
// ms, CPU per request in µs, throughput in req/s, the error rate in %;
// the difference, interval and margin of a relative metric in %.
func (m Metric) Cells() Cells {
	c := Cells{Old: m.value(m.Old), New: m.value(m.New)}
	switch {
	case m.Relative:
		c.Difference, c.CI95, c.Margin = pct(m.Difference), pct(m.CI95[0])+" … "+pct(m.CI95[1]), "±"+strings.TrimPrefix(pct(m.Margin), "+")
		if m.Against == AgainstSoakdCPU {
			c.Difference += " vs soakd"
		}
		if m.HigherIsBetter {
			c.Margin = "−" + strings.TrimPrefix(pct(m.Margin), "+")
		}
	case m.Unit == "points" && m.Verdict == Unjudged:
		c.Difference, c.CI95, c.Margin = signed(m.Difference)+" pt", "–", "–"
	case m.Unit == "points":
		c.Difference, c.CI95, c.Margin = signed(m.Difference)+" pt", signed(m.CI95[0])+" … "+signed(m.CI95[1])+" pt", "±"+units.Sig3(m.Margin)+" pt"
	default:
		c.Difference, c.CI95, c.Margin = m.value(m.Difference), m.value(m.CI95[0])+" … "+m.value(m.CI95[1]), "±"+m.value(m.Margin)
	}
	return c
}

// MarginText is the margin's cell with how it is set beside it:
// "±10 % (--latency-margin)".
func (m Metric) MarginText() string {
	c := m.Cells().Margin
	if m.MarginBy != "" {
		c += " (" + m.MarginBy + ")"
	}
	return c
}

func (m Metric) value(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	switch m.Unit {
	case "seconds":
		return units.Sig3(v*1e3) + " ms"
	case "seconds/request":
		return units.Sig3(v*1e6) + " µs"
	case "requests/second":
		return units.Sig3(v) + " req/s"
	case "points":
		return units.Sig3(v) + " %"
	}
	if base, ok := strings.CutSuffix(m.Unit, "/request"); ok {
		return units.Amount(v, base) + "/req"
	}
	return units.Amount(v, m.Unit)
}

func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return signed(100*v) + " %"
}

func signed(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := units.Sig3(v)
	if v > 0 {
		s = "+" + s
	}
	return s
}

// WriteText writes the comparison as a table, then each metric's reason.
func (r Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Verdict: %s\n\n", r.Verdict)
	cols := r.columns()
	fmt.Fprintf(tw, "metric\t%s\t%s\t%s\t95 %% CI\tmargin\tverdict\n", cols.Old, cols.New, cols.Difference)
	for _, n := range r.Names() {
		m, c := r.Metrics[n], r.Metrics[n].Cells()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n, c.Old, c.New, c.Difference, c.CI95, m.MarginText(), m.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if cols.Note != "" {
		fmt.Fprintf(w, "%s\n\n", cols.Note)
	}
	if c := r.Contention; len(c) == 2 {
		fmt.Fprintf(w, "Contention: the threads waited %.3g s for a core per CPU second they ran (%s), %.3g s (%s).\n\n", c[0], cols.Old, c[1], cols.New)
	}
	for _, n := range r.Names() {
		if m := r.Metrics[n]; m.Reason != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", n, m.Reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteMarkdown writes the comparison as a Markdown table, fit for a CI
// job's summary.
func (r Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### soakd compare: %s %s\n\n", icon(r.Verdict), r.Verdict)
	cols := r.columns()
	fmt.Fprintf(&b, "| metric | %s | %s | %s | 95 %% CI | margin | verdict |\n|---|---:|---:|---:|---:|---:|---|\n", cols.Old, cols.New, cols.Difference)
	for _, n := range r.Names() {
		m, c := r.Metrics[n], r.Metrics[n].Cells()
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s %s |\n", n, c.Old, c.New, c.Difference, c.CI95, m.MarginText(), icon(m.Verdict), m.Verdict)
	}
	if cols.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", cols.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func icon(v string) string {
	switch v {
	case Regressed:
		return "❌"
	case Same, Improved:
		return "✅"
	}
	return "❔"
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the comparison as a JUnit test suite: one test case
// per metric, failed when regressed, skipped when inconclusive or not
// judged.
func (r Result) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: "soakd compare"}
	for _, n := range r.Names() {
		m, c := r.Metrics[n], r.Metrics[n].Cells()
		line := fmt.Sprintf("%s: old %s, new %s, difference %s (95 %% CI %s), margin %s: %s. %s",
			n, c.Old, c.New, c.Difference, c.CI95, m.MarginText(), m.Verdict, m.Reason)
		tc := junitCase{Name: n, Classname: "soakd.compare", Output: line}
		switch m.Verdict {
		case Regressed:
			tc.Failure, s.Failures = &junitMessage{Message: m.Verdict, Text: line}, s.Failures+1
		case Inconclusive, Unjudged:
			tc.Skipped, s.Skipped = &junitMessage{Message: m.Verdict + ": " + m.Reason}, s.Skipped+1
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Line is the comparison in one line: the verdict and the metrics that
// set it.
func (r Result) Line() string {
	var worst []string
	for _, n := range r.Names() {
		m := r.Metrics[n]
		if m.Verdict == r.Verdict && (r.Verdict == Regressed || r.Verdict == Inconclusive) {
			c := m.Cells()
			worst = append(worst, fmt.Sprintf("%s %s (95 %% CI %s, margin %s)", n, c.Difference, c.CI95, m.MarginText()))
		}
	}
	if len(worst) == 0 {
		return fmt.Sprintf("soakd compare: %s (%d metrics)", r.Verdict, len(r.Metrics))
	}
	return fmt.Sprintf("soakd compare: %s: %s", r.Verdict, strings.Join(worst, "; "))
}

// marginFlag names how a reader sets m's margin: its flag, else "its
// margin".
func (m Metric) marginFlag() string {
	if m.MarginBy != "" {
		return m.MarginBy
	}
	return "its margin"
}
