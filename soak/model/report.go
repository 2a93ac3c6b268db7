package model

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// Report is the outcome of a run. Its JSON form is what `soakd run --json`
// prints and what the daemon stores; the field names are stable.
type Report struct {
	Verdict   string                      `json:"verdict"` // "failing", "leak", "clean" or "inconclusive"
	Target    TargetInfo                  `json:"target"`
	Phases    Phases                      `json:"phases"`
	Resources map[string]verdict.Resource `json:"resources"`
	CPU       verdict.CPU                 `json:"cpu"`
	// Requests is the verdict on the load's requests: failing when too
	// many failed; nil when the run had no load to judge.
	Requests *verdict.Health `json:"requests,omitempty"`
	Load     *load.Summary   `json:"load"`
	Started  time.Time       `json:"started"`
	Ended    time.Time       `json:"ended"`
	Samples  int             `json:"samples"`
	// Sampling is how the run was sampled; nil when the report was made
	// from stored samples (the daemon's live and recovered analyses,
	// `soakd analyze`).
	Sampling *Sampling `json:"sampling,omitempty"`
	// Where says what was looked at to find where the growth lives, and
	// lists the snapshot files kept; nil when nothing was.
	Where *Where `json:"where,omitempty"`
	// LatencyBlocks are the load's latency over time, in blocks of its
	// progress intervals (see LatencyBlock); nil when the report was made
	// from stored samples.
	LatencyBlocks []LatencyBlock `json:"latency_blocks,omitempty"`
	// RateShortfall says the open loop reached under RateShortShare of
	// its requested rate (see RateShortfall); "" when it did not.
	RateShortfall string `json:"rate_shortfall,omitempty"`
	// Grew names, for a growing resource of a tree of two or more
	// processes, the process whose own series carries the growth (see
	// Grew); nil when none does or the records hold no members.
	Grew []Grew `json:"grew,omitempty"`
	// Until is set for an until-decided run: its looks, the level its
	// analysis is at, and what it left undecided.
	Until *Until `json:"until_decided,omitempty"`
	// Records are the run's samples; they go to samples.csv, not the JSON.
	Records []Record `json:"-"`
}

// TargetInfo describes the sampled target.
type TargetInfo struct {
	Description  string           `json:"description,omitempty"`
	Probed       bool             `json:"probed"`
	Incarnations int              `json:"incarnations"`
	Restarts     int              `json:"restarts"`
	Exit         *probes.ExitInfo `json:"exit,omitempty"`
	// DiedAt is when the target was first seen gone during the load, when
	// it did not come back within the grace period (Options.DeadGrace) and
	// the load was stopped; nil otherwise.
	DiedAt *time.Time `json:"died_at,omitempty"`
	// DeadGraceSeconds is that grace period, when DiedAt is set.
	DeadGraceSeconds float64 `json:"dead_grace_seconds,omitempty"`
	// Remote is set when a remote source was sampled instead of /proc.
	Remote *RemoteInfo `json:"remote,omitempty"`
	// HostMemoryBytes is the host's RAM (MemTotal), for the time a leak
	// with no memory limit takes to fill it (NoLimit); 0 when unknown.
	HostMemoryBytes uint64 `json:"host_memory_bytes,omitempty"`

	// Stopped lists the spans in which the target was stopped (SIGSTOP);
	// see StoppedSpans.
	Stopped []StoppedSpan `json:"stopped,omitempty"`
	// Unsampled names the load's host:ports that the sampled tree does
	// not serve, each with who serves it instead, e.g. "127.0.0.1:8081
	// (pid 1234 (nginx), not in the sampled tree)" or "10.0.0.2:80 (not
	// on this machine)".
	Unsampled []string `json:"unsampled,omitempty"`
	// Upstreams are the local servers the sampled tree forwards to that
	// are not in it (a reverse proxy's backends), each with when it was
	// first seen and whether it was followed (see Upstream).
	Upstreams []Upstream `json:"upstreams,omitempty"`
	// Stall is the longest time the target stopped answering during the
	// load, if it did.
	Stall *Stall `json:"stall,omitempty"`
	// Collector names the root process's garbage-collected runtime ("Go",
	// "JVM", "Node"), when it is one: its memory's endpoint split is not
	// judged (docs/attribution.md).
	Collector string `json:"collector,omitempty"`
}

// TargetDied tells whether the target died during the load and the load
// was stopped: the run's first finding.
func (r *Report) TargetDied() bool { return r.Target.DiedAt != nil }

// DeathFinding is the sentence that says the target died, or "".
func (r *Report) DeathFinding() string {
	t := r.Target
	if t.DiedAt == nil {
		return ""
	}
	s := fmt.Sprintf("The target died at %s and was not back within %s: the load was stopped there, and the verdicts cover the run until then.",
		t.DiedAt.Format(time.RFC3339), FormatDuration(t.DeadGraceSeconds))
	if e := t.Exit; e != nil {
		s = fmt.Sprintf("The target died at %s%s and was not back within %s: the load was stopped there, and the verdicts cover the run until then.",
			t.DiedAt.Format(time.RFC3339), exitStatus(e), FormatDuration(t.DeadGraceSeconds))
	}
	return s
}

// Phases gives the length of each phase, in seconds and in requests, and
// the number of samples in the soak.
type Phases struct {
	BaselineSeconds float64 `json:"baseline_seconds"`
	WarmupSeconds   float64 `json:"warmup_seconds"`
	WarmupRequests  uint64  `json:"warmup_requests"`
	SoakSeconds     float64 `json:"soak_seconds"`
	SoakRequests    uint64  `json:"soak_requests"`
	SoakSamples     int     `json:"soak_samples"`
	CooldownSeconds float64 `json:"cooldown_seconds"`
}

// Sampling is the report's account of the sampling cadence.
type Sampling struct {
	// Auto is true when the interval was paced to the run, false when
	// --interval set it.
	Auto bool `json:"auto"`
	// IntervalSeconds is the interval when the load ended;
	// MinIntervalSeconds and MaxIntervalSeconds bound the automatic
	// interval under load.
	IntervalSeconds    float64 `json:"interval_seconds"`
	MinIntervalSeconds float64 `json:"min_interval_seconds,omitempty"`
	MaxIntervalSeconds float64 `json:"max_interval_seconds,omitempty"`
	// ProbeCostSeconds is soakd's CPU time per sample (reading the target
	// and recording the sample), the mean over the run; CPUShare is all
	// of it over the run's wall time, in cores.
	ProbeCostSeconds float64 `json:"probe_cost_seconds"`
	CPUShare         float64 `json:"cpu_share"`
}

// HasLeak reports whether any resource was called a leak (a failing run
// may leak too).
func (r *Report) HasLeak() bool { return r.Verdict == verdict.Leak || len(r.Leaks()) > 0 }

// Failing reports whether the run's requests failed: its verdict is
// "failing".
func (r *Report) Failing() bool { return r.Verdict == verdict.OverallFailing }

// Leaks names the resources called a leak, in display order, and the CPU
// cost per request when it keeps rising (a CPU leak).
func (r *Report) Leaks() []string {
	var l []string
	for _, n := range r.ResourceNames() {
		if r.Resources[n].Verdict == verdict.Leak {
			l = append(l, n)
		}
	}
	if r.CPU.Cost.Rising {
		l = append(l, CPUCostName)
	}
	return l
}

// CPUCostName names the CPU cost per request among a report's leaks.
const CPUCostName = "cpu per request"

// VerdictLine is the report's first line (after a death): the verdict,
// and what a user can conclude from it: for a clean run the resource
// closest to its floor and the most it can grow (see Closest); for an
// inconclusive one the resource that needs the longest to settle and
// how long (see Unsettled); for a failing run how many requests failed,
// why and when, and any leak found beside it.
func (r *Report) VerdictLine() string {
	if !r.Failing() || r.Requests == nil {
		s := "Verdict: " + strings.ToUpper(r.Verdict)
		switch r.Verdict {
		case verdict.OverallClean:
			s += r.cleanText()
		case verdict.OverallInconclusive:
			if t := r.unsettledText(); t != "" {
				s += ": " + t
			}
		}
		return s
	}
	s := "Verdict: FAILING: " + r.Requests.Reason
	if l := r.Leaks(); len(l) > 0 {
		s += "; also leaking: " + strings.Join(l, ", ")
	}
	return s
}

// Closest names the stable or plateaued resource whose bound (the most
// it can grow over the horizon) is the largest share of its floor; ""
// when none has one.
func (r *Report) Closest() string {
	best, share := "", -1.0
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		if res.Bound == "" || res.FloorPerDay <= 0 {
			continue
		}
		if v := res.BoundPerDay / res.FloorPerDay; v > share {
			best, share = n, v
		}
	}
	return best
}

// cleanText is what a clean run's first line adds: the resource closest
// to its floor and its bound, and the resources sampled too slowly to
// hold the verdict back that are still undecided (the run's verdict
// does not wait for them; see runner's overall), so that "no resource"
// claims only what was decided; "" when no resource has a bound.
func (r *Report) cleanText() string {
	n := r.Closest()
	if n == "" {
		return ""
	}
	u, open := r.Unsettled()
	if u != "" {
		open = append([]string{u}, open...)
	}
	if len(open) == 0 {
		return ": no resource grows faster than its floor; closest: " + n + " " + r.Resources[n].Bound
	}
	return ": no resource decided grows faster than its floor; closest: " + n + " " + r.Resources[n].Bound +
		"; undecided, sampled more slowly: " + strings.Join(open, ", ")
}

// Unsettled names the inconclusive resource that needs the most extra
// requests to settle (see verdict.Resource.SettleRequests), and the
// others left inconclusive; "" when none is. A resource whose advice
// names no number of requests (too few samples, recycling) counts as
// needing the most.
func (r *Report) Unsettled() (string, []string) {
	best, most := "", -1.0
	var all []string
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		if res.Verdict != verdict.Inconclusive {
			continue
		}
		all = append(all, n)
		need := res.SettleRequests
		if need <= 0 {
			need = math.Inf(1)
		}
		if need > most {
			best, most = n, need
		}
	}
	others := slices.DeleteFunc(all, func(n string) bool { return n == best })
	return best, others
}

// unsettledText says which resource keeps the run inconclusive and how
// long it still needs at the soak's throughput, e.g. "threads needs
// about 2.0 min more to settle (run ≥ 140 000 more requests); also
// undecided: close_wait".
func (r *Report) unsettledText() string {
	n, others := r.Unsettled()
	if n == "" {
		return ""
	}
	res := r.Resources[n]
	var s string
	switch p := r.Phases; {
	case res.SettleRequests > 0 && p.SoakSeconds > 0 && p.SoakRequests > 0:
		sec := res.SettleRequests / (float64(p.SoakRequests) / p.SoakSeconds)
		s = fmt.Sprintf("%s needs about %s more to settle (≥ %s more requests)", n, FormatDuration(sec), units.Group(res.SettleRequests))
	case res.SettleRequests > 0:
		s = fmt.Sprintf("%s needs ≥ %s more requests to settle", n, units.Group(res.SettleRequests))
	case res.Settle != "":
		s = n + ": " + res.Settle
	default:
		s = n + " is undecided"
	}
	if len(others) > 0 {
		s += "; also undecided: " + strings.Join(others, ", ")
	}
	return s
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFiles writes report.json and report.txt into dir.
func (r *Report) WriteFiles(dir string) error {
	for name, write := range map[string]func(io.Writer) error{"report.json": r.WriteJSON, "report.txt": r.WriteText} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// ResourceNames returns the report's resources in display order: the
// table's order, then any others by name.
func (r *Report) ResourceNames() []string {
	var names []string
	for _, res := range Resources {
		if _, ok := r.Resources[res.Name]; ok {
			names = append(names, res.Name)
		}
	}
	var rest []string
	for n := range r.Resources {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// WriteText writes the human report: the verdict block first, then the
// target, the phases and the load accounting.
func (r *Report) WriteText(w io.Writer) error {
	if f := r.DeathFinding(); f != "" {
		fmt.Fprintf(w, "TARGET DIED: %s\n", f)
	}
	for _, f := range r.StoppedFindings() {
		fmt.Fprintf(w, "TARGET STOPPED: %s.\n", f)
	}
	// A load that fell short of its rate leads when nothing else does;
	// after a death, a stop, a stall or failing requests (which slow an
	// open loop down themselves) it follows the verdict.
	short := r.RateShortfall != ""
	lead := short && r.DeathFinding() == "" && len(r.Target.Stopped) == 0 && r.Target.Stall == nil && !r.Failing()
	if lead {
		fmt.Fprintf(w, "LOAD BELOW RATE: %s.\n", r.RateShortfall)
	}
	r.writeStall(w)
	fmt.Fprintln(w, r.VerdictLine())
	if short && !lead {
		fmt.Fprintf(w, "LOAD BELOW RATE: %s.\n", r.RateShortfall)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if h := r.Requests; h != nil && !r.Failing() {
		fmt.Fprintf(tw, "  requests\t%s\t%s\n", h.Verdict, h.Reason)
	}
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", n, res.Verdict, res.Reason)
	}
	if r.CPU.Bound != "" {
		fmt.Fprintf(tw, "  cpu\t%s\t%s\n", r.CPU.Bound, r.CPU.Reason)
	}
	r.Target.Remote.writeAbsent(tw)
	tw.Flush()
	r.writeEndpoints(w)
	r.Target.writeUnsampled(w)
	r.Target.writeUpstreams(w)
	if d := r.CPU.Cost; d.Rising || d.Inconclusive {
		fmt.Fprintf(w, "  %s\n", d.Reason)
	}
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		switch {
		case res.TimeToExhaustionSeconds != nil:
			fmt.Fprintf(w, "  %s reaches its limit (%s) in %s at this rate\n", n,
				units.Amount(res.Limit, res.Unit), FormatDuration(*res.TimeToExhaustionSeconds))
		case res.Limit > 0 && res.Verdict != verdict.Inconclusive:
			fmt.Fprintf(w, "  %s never reaches its limit (%s): not growing\n", n, units.Amount(res.Limit, res.Unit))
		case NoLimit(res, r.Target.HostMemoryBytes) != "":
			fmt.Fprintf(w, "  %s has %s\n", n, NoLimit(res, r.Target.HostMemoryBytes))
		}
	}
	// Every resource left inconclusive says what would settle it, in a
	// leak's report too (a leak in memory says nothing of the threads);
	// a failing run's load measured nothing worth soaking longer.
	if !r.Failing() {
		for _, n := range r.ResourceNames() {
			if s := r.Resources[n].Settle; s != "" && r.Resources[n].Verdict == verdict.Inconclusive {
				fmt.Fprintf(w, "  to settle %s: %s\n", n, s)
			}
		}
	}
	r.writeUntil(w)
	r.writeGrew(w)
	r.writeWhere(w)
	fmt.Fprintln(w)
	r.writeTarget(w)
	if r.Load != nil {
		fmt.Fprintln(w)
		return r.Load.WriteText(w)
	}
	return nil
}

func (r *Report) writeTarget(w io.Writer) {
	t := r.Target
	if t.Probed {
		fmt.Fprintf(w, "Target:            %s\n", t.Description)
		if t.Restarts > 0 {
			fmt.Fprintf(w, "Restarts:          %d (each incarnation fitted apart)\n", t.Restarts)
		}
		if e := t.Exit; e != nil {
			fmt.Fprintf(w, "Target exited:     at %s%s\n", e.Time.Format(time.RFC3339), exitStatus(e))
		}
		t.Remote.writeNotes(w)
	}
	p := r.Phases
	fmt.Fprintf(w, "Phases:            baseline %.1f s, warm-up %.1f s (%s), soak %.1f s (%s, %s), cool-down %.1f s\n",
		p.BaselineSeconds, p.WarmupSeconds, counted(p.WarmupRequests, "request"), p.SoakSeconds,
		counted(p.SoakRequests, "request"), counted(uint64(max(p.SoakSamples, 0)), "sample"), p.CooldownSeconds)
	if s := r.Sampling; s != nil {
		fmt.Fprintf(w, "Sampling:          %s\n", s.String())
	}
	if r.CPU.Throughput > 0 {
		r.writeCPU(w)
	}
}

// writeCPU writes the CPU verdict's figures.
func (r *Report) writeCPU(w io.Writer) {
	c := r.CPU
	split := fmt.Sprintf("user %.0f %% / system %.0f %%", 100*c.UserShare, 100*c.SystemShare)
	if c.SplitUnknown {
		split = verdict.SplitUnavailable
	}
	fmt.Fprintf(w, "CPU:               U %.3f cores, X %.1f req/s, D %s, R %s, N %.2f, D/R %.0f %%, %s\n",
		c.Utilization, c.Throughput, FormatSeconds(c.DemandSeconds), FormatSeconds(c.ResponseSeconds),
		c.Concurrency, 100*c.RequestCPUShare, split)
	if c.Capacity > 0 {
		fmt.Fprintf(w, "CPU capacity:      %s cores: %s\n", strconv.FormatFloat(c.Capacity, 'g', 3, 64), c.CapacitySource)
	}
	if h := c.HotThread; h != nil {
		fmt.Fprintf(w, "Busiest thread:    %d (%s) of pid %d, on CPU %.0f %% and waiting for a core %.0f %% of the time\n",
			h.TID, h.Name, h.PID, 100*h.CPU, 100*h.Wait)
	}
	if p := c.HotProcess; p != nil {
		fmt.Fprintf(w, "Busiest process:   %d (%s), %.2f cores\n", p.PID, p.Name, p.Cores)
	}
	machine := ""
	if c.HostCPUs > 0 {
		machine = fmt.Sprintf(", the machine %.2f of %d cores busy", c.HostUtilization, c.HostCPUs)
	}
	fmt.Fprintf(w, "Client:            soakd %.3f cores%s, run-queue wait %s per request\n",
		c.ClientUtilization, machine, FormatSeconds(c.RunqueueWaitSeconds))
	drift := fmt.Sprintf("p99 latency %s, throughput %+.1f %% from the first to the last third", p99Drift(c.P99SlopePerHour, r.Phases.SoakSeconds), 100*c.ThroughputDecay)
	if d := c.Cost; d.Windows >= 2 && d.Start > 0 {
		drift += fmt.Sprintf(", CPU per request %s to %s (%+.0f %%)", FormatSeconds(d.Start), FormatSeconds(d.End), 100*d.Change)
	}
	fmt.Fprintf(w, "Drift:             %s\n", drift)
	if nr := c.Cost.NotRising(r.Phases.SoakSeconds); nr != "" {
		fmt.Fprintf(w, "CPU cost:          %s\n", nr)
	}
}

// p99Drift words the p99 latency's slope: over the soak when it was
// shorter than an hour (a slope per hour projected from a 40 s soak reads
// as "+5857.490 ms/h", a figure nobody measured), per hour otherwise;
// milliseconds to three significant digits either way.
func p99Drift(perHour, soakSeconds float64) string {
	if soakSeconds > 0 && soakSeconds < 3600 {
		return fmt.Sprintf("%s ms over the soak's %s", signedG3(1000*perHour*soakSeconds/3600), FormatDuration(soakSeconds))
	}
	return signedG3(1000*perHour) + " ms/h"
}

// signedG3 is v with its sign, to three significant digits.
func signedG3(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%+.0f", v)
	}
	return fmt.Sprintf("%+.3g", v)
}

// String says how the run was sampled, in one line.
func (s *Sampling) String() string {
	every := func(sec float64) string {
		return time.Duration(sec * float64(time.Second)).Round(100 * time.Microsecond).String()
	}
	how := "set by --interval"
	if s.Auto {
		how = "paced to the run"
		if s.MinIntervalSeconds > 0 && s.MaxIntervalSeconds > s.MinIntervalSeconds {
			how += fmt.Sprintf(", %s to %s under load", every(s.MinIntervalSeconds), every(s.MaxIntervalSeconds))
		}
	}
	return fmt.Sprintf("every %s (%s); %s of soakd's CPU per sample, %.2f %% of a core in all",
		every(s.IntervalSeconds), how, FormatSeconds(s.ProbeCostSeconds), 100*s.CPUShare)
}

func exitStatus(e *probes.ExitInfo) string {
	switch {
	case !e.Known:
		return ""
	case e.Signal != "":
		return ", killed by " + e.Signal
	}
	return fmt.Sprintf(", exit status %d", e.Code)
}

// FormatSeconds formats a short duration given in seconds.
func FormatSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond).String()
}

// FormatDuration formats a long duration given in seconds, in hours or days.
func FormatDuration(s float64) string {
	switch {
	case s >= 2*86400:
		return fmt.Sprintf("%.1f days", s/86400)
	case s >= 3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.0f s", s)
}

// counted gives a count and its noun: "1 sample", "2 samples".
func counted(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatUint(n, 10) + " " + noun + "s"
}
