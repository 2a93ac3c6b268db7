package soak

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// Report is the outcome of a run. Its JSON form is what `soakd run --json`
// prints and what the daemon stores; the field names are stable.
type Report struct {
	Verdict   string                      `json:"verdict"` // "leak", "clean" or "inconclusive"
	Target    TargetInfo                  `json:"target"`
	Phases    Phases                      `json:"phases"`
	Resources map[string]verdict.Resource `json:"resources"`
	CPU       verdict.CPU                 `json:"cpu"`
	Load      *load.Summary               `json:"load"`
	Started   time.Time                   `json:"started"`
	Ended     time.Time                   `json:"ended"`
	Samples   int                         `json:"samples"`
	// Sampling is how the run was sampled; nil when the report was made
	// from stored samples (the daemon's live and recovered analyses,
	// `soakd analyze`).
	Sampling *Sampling `json:"sampling,omitempty"`
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
	// Remote is set when a remote source was sampled instead of /proc.
	Remote *RemoteInfo `json:"remote,omitempty"`
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

// HasLeak reports whether any resource was called a leak.
func (r *Report) HasLeak() bool { return r.Verdict == verdict.Leak }

func (r *runner) report(sum *load.Summary, tgt *probes.Target, loadEnd time.Time) *Report {
	ao := AnalysisOptions{Memory: r.o.Memory, FDs: r.o.FDs, MemLimit: r.o.MemLimit}
	if r.o.Load.Rate == 0 {
		ao.Concurrency = max(r.o.Load.Concurrency, 1)
	}
	var ti TargetInfo
	if tgt != nil {
		ti = TargetInfo{Description: tgt.Describe(), Probed: true, Exit: tgt.Exit()}
	}
	if r.remote != nil {
		ti = TargetInfo{Description: r.remote.Describe(), Probed: true}
		if tgt != nil {
			ti.Description += "; started as " + tgt.Describe()
			ti.Exit = tgt.Exit()
		}
	}
	rep := NewReport(r.recs, sum, ti, ao)
	if r.remote != nil {
		r.remoteInfo(rep)
	}
	rep.Started, rep.Ended = r.start, r.o.Now()
	rep.Sampling = r.pace.sampling(rep.Ended.Sub(rep.Started).Seconds())
	rep.Phases.CooldownSeconds = 0
	if n := len(r.recs); n > 0 && r.recs[n-1].Phase == verdict.Cooldown {
		rep.Phases.CooldownSeconds = r.recs[n-1].Elapsed - loadEnd.Sub(r.start).Seconds()
	}
	return rep
}

// NewReport analyses records into a report. The daemon uses it for live
// analysis and for runs that a crash interrupted (sum is then nil).
func NewReport(recs []Record, sum *load.Summary, ti TargetInfo, ao AnalysisOptions) *Report {
	rep := &Report{Load: sum, Target: ti, Samples: len(recs), Records: recs}
	if n := len(recs); n > 0 {
		rep.Started, rep.Ended = recs[0].Time, recs[n-1].Time
	}
	rep.Phases = phases(recs)
	if !ti.Probed {
		rep.Resources = map[string]verdict.Resource{}
		rep.CPU = verdict.CPU{Bound: verdict.Inconclusive, Reason: "no target was sampled (--no-probe)"}
		rep.Verdict = verdict.Inconclusive
		return rep
	}
	rep.Target.Incarnations, rep.Target.Restarts = incarnations(recs)
	rep.Resources, rep.CPU = Analyze(recs, sum, ao)
	rep.Verdict = overall(rep.Resources)
	return rep
}

// overall is the run's verdict. PSS and USS (read every 30 s by default)
// and CLOSE_WAIT sockets (counted every 5 s) are sampled more slowly than
// the rest, so a short run often has too few of them to decide; when they
// are inconclusive and RSS, fds and threads are decided, those speak for
// the run and the slow ones do not hold its verdict back. A leak in any
// resource still counts.
func overall(rs map[string]verdict.Resource) string {
	deciding := make(map[string]verdict.Resource, len(rs))
	for name, r := range rs {
		if slowlySampled[name] && r.Verdict == verdict.Inconclusive {
			continue
		}
		deciding[name] = r
	}
	if len(deciding) == 0 {
		return verdict.Overall(rs)
	}
	return verdict.Overall(deciding)
}

// slowlySampled are the resources read on a slower cadence than a sample.
var slowlySampled = map[string]bool{"pss": true, "uss": true, "close_wait": true}

// phases measures the phases from the records. The load starts at the
// last baseline sample (taken as the baseline ends), or at the run's start
// when there is none.
func phases(recs []Record) Phases {
	var p Phases
	var loadStart, loadEnd float64
	for _, r := range recs {
		switch r.Phase {
		case verdict.Baseline:
			p.BaselineSeconds, loadStart, loadEnd = r.Elapsed-recs[0].Elapsed, r.Elapsed, r.Elapsed
		case verdict.Warmup:
			p.WarmupSeconds, p.WarmupRequests = r.Elapsed-loadStart, r.Requests
			loadEnd = r.Elapsed
		case verdict.Soak:
			p.SoakSeconds, p.SoakRequests = r.Elapsed-loadStart-p.WarmupSeconds, r.Requests-p.WarmupRequests
			p.SoakSamples++
			loadEnd = r.Elapsed
		case verdict.Cooldown:
			p.CooldownSeconds = r.Elapsed - loadEnd
		}
	}
	return p
}

func incarnations(recs []Record) (n, restarts int) {
	seen := map[int]bool{}
	for _, r := range recs {
		if r.Incarnation > 0 && !seen[r.Incarnation] {
			seen[r.Incarnation] = true
		}
	}
	return len(seen), max(len(seen)-1, 0)
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
			return fmt.Errorf("--out: %w", err)
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--out: writing %s: %w", name, err)
		}
	}
	return nil
}

// resourceOrder is the order resources are listed in.
var resourceOrder = []string{"rss", "pss", "uss", "anon", "fds", "threads", "close_wait"}

// ResourceNames returns the report's resources in display order.
func (r *Report) ResourceNames() []string {
	var names []string
	for _, n := range resourceOrder {
		if _, ok := r.Resources[n]; ok {
			names = append(names, n)
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
	fmt.Fprintf(w, "Verdict: %s\n", strings.ToUpper(r.Verdict))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", n, res.Verdict, res.Reason)
	}
	if r.CPU.Bound != "" {
		fmt.Fprintf(tw, "  cpu\t%s\t%s\n", r.CPU.Bound, r.CPU.Reason)
	}
	r.Target.Remote.writeAbsent(tw)
	tw.Flush()
	if r.CPU.Cost.Rising {
		fmt.Fprintf(w, "  %s\n", r.CPU.Cost.Reason)
	}
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		switch {
		case res.TimeToExhaustionSeconds != nil:
			fmt.Fprintf(w, "  %s reaches its limit (%s) in %s at this rate\n", n,
				FormatValue(res.Limit, res.Unit), FormatDuration(*res.TimeToExhaustionSeconds))
		case res.Limit > 0 && res.Verdict != verdict.Inconclusive:
			fmt.Fprintf(w, "  %s never reaches its limit (%s): not growing\n", n, FormatValue(res.Limit, res.Unit))
		}
	}
	if r.Verdict == verdict.Inconclusive {
		for _, n := range r.ResourceNames() {
			if s := r.Resources[n].Settle; s != "" {
				fmt.Fprintf(w, "  to settle %s: %s\n", n, s)
			}
		}
	}
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
	fmt.Fprintf(w, "Phases:            baseline %.1f s, warm-up %.1f s (%d requests), soak %.1f s (%d requests, %d samples), cool-down %.1f s\n",
		p.BaselineSeconds, p.WarmupSeconds, p.WarmupRequests, p.SoakSeconds, p.SoakRequests, p.SoakSamples, p.CooldownSeconds)
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
		fmt.Fprintf(w, "CPU capacity:      %g cores: %s\n", c.Capacity, c.CapacitySource)
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
	drift := fmt.Sprintf("p99 latency %+.3f ms/h, throughput %+.1f %% from the first to the last third", 1000*c.P99SlopePerHour, 100*c.ThroughputDecay)
	if d := c.Cost; d.Windows >= 2 && d.Start > 0 {
		drift += fmt.Sprintf(", CPU per request %s to %s (%+.0f %%)", FormatSeconds(d.Start), FormatSeconds(d.End), 100*d.Change)
	}
	fmt.Fprintf(w, "Drift:             %s\n", drift)
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

// FormatValue formats a resource value in its unit: bytes in KiB/MiB/GiB.
func FormatValue(v float64, unit string) string {
	if unit != "bytes" {
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	a := math.Abs(v)
	switch {
	case a >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
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
