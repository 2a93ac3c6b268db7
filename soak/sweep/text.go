package sweep

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"
)

// tableHead is the text table's header: openload's columns, then the
// CPU's and the kernel's.
const tableHead = "clients      req/s      p50      p99    p99.9      max  errors  cpu    U  overflows  synretx  acceptq  estab      rss    fds"

// row is one level's line of the table.
func row(l Level) string {
	q := fmt.Sprintf("%d/%d", l.AcceptQueueMax, l.AcceptQueueLimit)
	bound := l.CPU.Bound
	if len(bound) > 4 {
		bound = bound[:4]
	}
	s := fmt.Sprintf("%7d %10.1f %8s %8s %8s %8s %7d %4s %4.2f %10d %8d %8s %6.0f %8s %6d",
		l.Concurrency, l.Throughput, dur(l.P50), dur(l.P99), dur(l.P999), dur(l.Max), l.Errors,
		bound, l.CPU.Utilization, l.ListenOverflows, l.SynRetrans, q, l.Established,
		humanize.IBytes(l.RSS), l.FDs)
	if len(l.SynModes) > 0 {
		s += fmt.Sprintf("  SYN-retransmit modes near %v s", l.SynModes)
	}
	return s
}

// dur writes seconds compactly: 850µs, 12.3ms, 1.02s.
func dur(s float64) string {
	switch {
	case s <= 0:
		return "-"
	case s < 1e-3:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3gms", s*1e3)
	}
	return fmt.Sprintf("%.3gs", s)
}

func (o *Options) headProgress() {
	if o.Progress != nil {
		fmt.Fprintln(o.Progress, tableHead)
	}
}

func (o *Options) progressRow(l Level) {
	if o.Progress != nil {
		fmt.Fprintln(o.Progress, row(l))
	}
}

// WriteText writes the report as text: the table, then the knee, the
// USL, the per-connection fit and the suggested soak.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep of %s (%s)\n\n%s\n", r.URL, r.Target, tableHead)
	for _, l := range r.Levels {
		fmt.Fprintln(&b, row(l))
	}
	if r.Stopped != "" {
		fmt.Fprintf(&b, "\nstopped early: %s\n", r.Stopped)
	}
	fmt.Fprintf(&b, "\nknee: %s\n", r.Knee.text())
	fmt.Fprintf(&b, "usl: %s\n", r.USL.text())
	fmt.Fprintf(&b, "per connection: %s\n", r.PerConnection.Text)
	fmt.Fprintf(&b, "%s\n", r.ClientFDNote)
	if s := r.Suggestion; s.Command != "" {
		fmt.Fprintf(&b, "\nsuggested soak: %s\n  %s\n", s.Reason, s.Command)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (k Knee) text() string {
	if k.Concurrency == 0 {
		return fmt.Sprintf("none within the ladder (%s): %s", k.Cause, k.Reason)
	}
	s := fmt.Sprintf("at %d clients, %s: %s", k.Concurrency, k.Cause, k.Reason)
	if !k.Confirmed {
		s += " (unconfirmed: fewer than two levels were measured past it)"
	}
	return singular(s)
}

func (u USL) text() string {
	if !u.OK {
		return "not fitted (fewer than 3 levels)"
	}
	peak := "no peak (κ = 0)"
	if u.Peak > 0 {
		peak = fmt.Sprintf("peak at N* ≈ %.0f clients, %.4g req/s", u.Peak, u.At(u.Peak))
	}
	return fmt.Sprintf("σ = %.3g (contention), κ = %.3g (coherency), λ = %.4g req/s per client, r² = %.3f; %s", u.Sigma, u.Kappa, u.Lambda, u.R2, peak)
}
