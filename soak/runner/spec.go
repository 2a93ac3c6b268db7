package runner

import (
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/urlx"
	"github.com/soakd/soakd/soak/verdict"
)

// Spec is a run as a user writes it. `soakd run`'s flags and a daemon
// job's YAML are two spellings of it: both start from DefaultSpec, both
// are checked by Check, whose errors carry the field's path (the CLI words
// a path as its flag, the config as file:line), and both become Options
// through Options.
type Spec struct {
	Target     TargetSpec     `yaml:"target"`
	Load       LoadSpec       `yaml:"load"`
	Sampling   SamplingSpec   `yaml:"sampling"`
	Phases     PhasesSpec     `yaml:"phases"`
	Thresholds ThresholdsSpec `yaml:"thresholds"`
	Where      WhereSpec      `yaml:"where"`
	// UntilDecided stops the load as soon as every part of the run is
	// decided (Options.UntilDecided); load.duration and load.requests
	// are then the most it may take.
	UntilDecided bool `yaml:"until_decided"`
}

// TargetSpec is the target part of a Spec: which process tree a run
// samples, as probes.Spec (at most one target kind set; with none, the
// owner of the load URL's port), and how the run treats it. Options
// splits it into Options.Target (the probes.Spec), NoProbe, DeadGrace
// and Remote.
type TargetSpec struct {
	probes.Spec `yaml:",inline"`
	NoProbe     bool `yaml:"no_probe"`
	// FollowUpstreams samples the local servers the tree forwards to
	// with it (Options.FollowUpstreams).
	FollowUpstreams bool `yaml:"follow_upstreams"`
	// DeadGrace is how long the target may be gone during the load
	// before the load stops (0: the default, 10 s; negative: never).
	DeadGrace time.Duration `yaml:"dead_grace"`
	// Remote samples the target through its metrics instead of /proc:
	// its own endpoint (metrics_url) or a Prometheus server's series
	// (prometheus_url with a selector). Exec may still start it.
	Remote remote.Config `yaml:"remote"`
}

// LoadSpec is the HTTP load.
type LoadSpec struct {
	URL         string `yaml:"url"`
	TargetsFile string `yaml:"targets_file"`
	// Attribute is "on" (the default: with two or more endpoints the mix
	// varies in blocks so that growth is split between them) or "off"
	// (the file's mix all run long).
	Attribute    string        `yaml:"attribute"`
	Method       string        `yaml:"method"`
	Headers      []string      `yaml:"headers"`
	Body         string        `yaml:"body"` // a STRING, or @FILE
	ContentType  string        `yaml:"content_type"`
	Concurrency  int           `yaml:"concurrency"` // 0: the load's default (1 closed, rate × timeout open)
	Rate         float64       `yaml:"rate"`
	Requests     uint64        `yaml:"requests"`
	Duration     time.Duration `yaml:"duration"`
	KeepAlive    bool          `yaml:"keepalive"`
	Timeout      time.Duration `yaml:"timeout"`
	Insecure     bool          `yaml:"insecure"`
	ExpectStatus []string      `yaml:"expect_status"`
	ExpectBody   string        `yaml:"expect_body"`
	CheckLength  bool          `yaml:"check_length"`
}

// SamplingSpec is the cadence of the target's samples.
type SamplingSpec struct {
	Interval      time.Duration `yaml:"interval"`       // 0 = paced to the run
	Smaps         bool          `yaml:"smaps"`          // false: never read smaps_rollup
	SmapsInterval time.Duration `yaml:"smaps_interval"` // 0: paced to the load's duration
	TopN          int           `yaml:"top_n"`          // per-process breakdown size
}

// PhasesSpec are the idle baseline before the load, the warm-up (excluded
// from the fits) and the cool-down.
type PhasesSpec struct {
	Baseline time.Duration `yaml:"baseline"` // 0 skips it
	Warmup   string        `yaml:"warmup"`   // N requests, 30s, 10%, or 0
	Cooldown time.Duration `yaml:"cooldown"`
}

// ThresholdsSpec are the verdict's thresholds and the memory limit.
type ThresholdsSpec struct {
	Alpha               float64 `yaml:"alpha"`
	LeakBytesPerRequest float64 `yaml:"leak_bytes_per_request"`
	LeakMinGrowth       string  `yaml:"leak_min_growth"` // a size, e.g. 1MiB
	LeakFDsPerRequest   float64 `yaml:"leak_fds_per_request"`
	MemLimit            string  `yaml:"mem_limit"` // a size; "" = the cgroup's memory.max
	// The horizon floors: growth projected over LeakHorizon at the
	// observed throughput that makes a leak (LeakHorizonGrowth of memory,
	// LeakHorizonFDs fds, or LeakLimitShare of the limit), and reaching
	// a limit within ExhaustionWithin.
	LeakHorizon       time.Duration `yaml:"leak_horizon"`
	LeakHorizonGrowth string        `yaml:"leak_horizon_growth"` // a size, e.g. 64MiB
	LeakHorizonFDs    float64       `yaml:"leak_horizon_fds"`
	LeakLimitShare    float64       `yaml:"leak_limit_share"`
	ExhaustionWithin  time.Duration `yaml:"exhaustion_within"`
	// Transient: a soak shorter than this is a leak only once the
	// resource has grown past the process's size at the load's start
	// (its own level, or the tree's RSS for a part of its memory).
	Transient time.Duration `yaml:"transient"`
	// The requests' health: a run is failing when more than MaxErrorRate
	// of its requests failed, or more than MaxWindowErrorRate in any
	// ErrorWindow (shares as "1%" or "0.01"), or the error rate rises.
	MaxErrorRate       string        `yaml:"max_error_rate"`
	MaxWindowErrorRate string        `yaml:"max_window_error_rate"`
	ErrorWindow        time.Duration `yaml:"error_window"`
	// MaxUnavailable: the run is failing when the target answered
	// nothing (stopped, or stalled past the timeout) for longer than this
	// in all: a share of the load ("1%", never less than one request
	// timeout) or a duration ("5s").
	MaxUnavailable string `yaml:"max_unavailable"`
}

// DefaultSpec returns a Spec with every default set. It is the only place
// the defaults are written: the CLI's flags show them and the config
// decodes each job over them.
func DefaultSpec() Spec {
	return Spec{
		Target: TargetSpec{Spec: probes.Spec{ReadyTimeout: 10 * time.Second, StopGrace: 5 * time.Second}},
		Load: LoadSpec{
			Method: "GET", KeepAlive: true, Timeout: 30 * time.Second, // Concurrency 0: the load's default
			Attribute: "on",
		},
		Sampling:   SamplingSpec{Smaps: true, TopN: 5}, // SmapsInterval 0: paced to the load's duration
		Phases:     PhasesSpec{Baseline: DefaultBaseline, Warmup: "10%"},
		Thresholds: DefaultThresholds(),
	}
}

// DefaultThresholds are the verdict package's thresholds, spelt as a
// user writes them.
func DefaultThresholds() ThresholdsSpec {
	mem, fds := verdict.MemoryThresholds, verdict.FDThresholds
	return ThresholdsSpec{
		Alpha: mem.Alpha, LeakBytesPerRequest: mem.MinPerRequest, LeakMinGrowth: size(mem.MinTotal),
		LeakFDsPerRequest: fds.MinPerRequest,
		LeakHorizon:       seconds(mem.Horizon), LeakHorizonGrowth: size(mem.HorizonGrowth), LeakHorizonFDs: fds.HorizonGrowth,
		LeakLimitShare: mem.HorizonLimitShare, ExhaustionWithin: seconds(mem.Exhaustion),
		Transient:    seconds(mem.Transient),
		MaxErrorRate: share(verdict.DefaultHealth.MaxRate), MaxWindowErrorRate: share(verdict.DefaultHealth.MaxWindowRate),
		ErrorWindow:    seconds(verdict.DefaultHealth.Window),
		MaxUnavailable: share(verdict.DefaultHealth.MaxUnavailableShare),
	}
}

// ParseUnavailable reads the most time a target may answer nothing: a
// share of the load (a percentage or a fraction, as ParseShare) or a
// duration such as 5s. It returns one of the two, the other 0.
func ParseUnavailable(s string) (shareOfLoad float64, d time.Duration, err error) {
	t := strings.TrimSpace(s)
	if t != "" && !strings.HasSuffix(t, "%") {
		if d, derr := time.ParseDuration(t); derr == nil {
			if d <= 0 {
				return 0, 0, fmt.Errorf("%q: want a duration above 0, such as 5s, or a share of the load, such as 1%%", s)
			}
			return 0, d, nil
		}
	}
	f, err := ParseShare(t)
	if err != nil {
		return 0, 0, fmt.Errorf("%q: want a share of the load, such as 1%% or 0.01, or a duration, such as 5s", s)
	}
	return f, 0, nil
}

// share writes a share as a user would: 1%, 0.5%.
func share(f float64) string { return strconv.FormatFloat(100*f, 'g', -1, 64) + "%" }

// ParseShare reads a share of requests: a percentage ("1%", "0.5%") or a
// fraction ("0.01"), above 0 and at most 100 %.
func ParseShare(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, div = strings.TrimSpace(p), 100
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f/div > 0 && f/div <= 1) {
		return 0, fmt.Errorf("%q: want a share above 0 and at most 100%%, such as 1%% or 0.01", s)
	}
	return f / div, nil
}

// size writes bytes as a user would: 1MiB, 64MiB.
func size(b float64) string {
	for _, u := range []struct {
		name string
		n    uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v := uint64(b); v >= u.n && v%u.n == 0 {
			return fmt.Sprintf("%d%s", v/u.n, u.name)
		}
	}
	return fmt.Sprintf("%.0fB", b)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Check validates the whole spec, every field, and returns the problems
// (nil when there are none). It reads the files the spec names
// (targets_file, a body @FILE) to check them.
func (s *Spec) Check() field.Errors {
	var es field.Errors
	s.Target.check(&es)
	s.Load.check(&es)
	s.Sampling.check(&es)
	s.Phases.check(&es)
	s.Thresholds.check(&es)
	s.Where.check(&es)
	if s.UntilDecided && s.Target.NoProbe {
		es.Add("until_decided", "decides on the target's samples, and {target.no_probe} samples none: drop one")
	}
	return es
}

func (t *TargetSpec) check(es *field.Errors) {
	*es = append(*es, t.Spec.Check()...)
	set := t.SetKinds()
	if t.NoProbe && len(set) > 0 {
		es.Add("target.no_probe", "{target.no_probe} samples no target, but {target.%s} is set: drop one", set[0].Name)
	}
	t.checkRemote(es, set)
	if t.FollowUpstreams && t.NoProbe {
		es.Add("target.follow_upstreams", "follows the sampled tree's upstreams, and {target.no_probe} samples no tree: drop one")
	}
	if t.FollowUpstreams && t.Remote.Enabled() {
		es.Add("target.follow_upstreams", "follows the upstreams found in /proc, and a remote source samples the target through its metrics instead: drop one")
	}
	if t.ReadyTimeout <= 0 {
		es.Add("target.ready_timeout", "must be > 0, got %s", t.ReadyTimeout)
	}
	if t.StopGrace < 0 {
		es.Add("target.stop_grace", "must be >= 0, got %s", t.StopGrace)
	}
}

// checkRemote checks the remote source: its own fields, and that it is
// the run's only way to sample (exec may still start the target).
func (t *TargetSpec) checkRemote(es *field.Errors, set []*probes.Kind) {
	if err := t.Remote.Validate(); err != nil {
		if fe := field.As(err); fe != nil {
			*es = append(*es, fe...)
		} else {
			es.Add("target.remote", "%v", err)
		}
		return
	}
	if !t.Remote.Enabled() {
		return
	}
	checkExtras(es, t.Remote.Metrics)
	if t.NoProbe {
		es.Add("target.no_probe", "{target.no_probe} samples nothing, but a remote source is set: drop one")
	}
	for _, k := range set {
		if !k.Starts {
			es.Add("target."+k.Name, "a remote source samples the target through its metrics; {target.%s} picks a local process to sample instead: drop one", k.Name)
		}
	}
}

// checkExtras checks the names of the remote source's extra resources
// against the table of resources (soak/model): a NAME may not take a
// resource's name, and a counter's (a SERIES ending in _total) must end
// in _total too, so that the analysis judges its rate.
func checkExtras(es *field.Errors, metrics []string) {
	for i, m := range metrics {
		x, err := remote.ParseExtra(m) // checked by Validate
		if err != nil {
			continue
		}
		p := fmt.Sprintf("target.remote.metrics[%d]", i)
		switch {
		case model.Taken(x.Name):
			es.Add(p, "resource name %q is taken; choose another NAME", x.Name)
		case strings.HasSuffix(x.Metric, model.CounterSuffix) && !strings.HasSuffix(x.Name, model.CounterSuffix):
			es.Add(p, "%s is a counter: name it %s%s so that its rate is judged, not its level", x.Metric, x.Name, model.CounterSuffix)
		}
	}
}

var methodRE = regexp.MustCompile(`^[A-Za-z]+$`)

func (l *LoadSpec) check(es *field.Errors) {
	l.checkEndpoints(es)
	if !methodRE.MatchString(l.Method) {
		es.Add("load.method", "%q: want a method such as GET or POST", l.Method)
	}
	for i, h := range l.Headers {
		if _, err := load.ParseHeader(h); err != nil {
			es.Add(fmt.Sprintf("load.headers[%d]", i), "%q: want \"Name: value\"", h)
		}
	}
	if strings.ContainsAny(l.ContentType, "\r\n") {
		es.Add("load.content_type", "must not contain line breaks")
	}
	l.checkBounds(es)
	for i, s := range l.ExpectStatus {
		if !validStatus(s) {
			es.Add(fmt.Sprintf("load.expect_status[%d]", i), "%q: want a status code 100-599 or a class such as 2xx", s)
		}
	}
	if _, err := regexp.Compile(l.ExpectBody); err != nil {
		es.Add("load.expect_body", "%q: bad regexp: %s", l.ExpectBody, regexpError(err))
	}
	if l.Attribute != "" && l.Attribute != "on" && l.Attribute != "off" {
		es.Add("load.attribute", "%q: want on (vary the mix to split growth between endpoints) or off (keep the file's mix)", l.Attribute)
	}
}

// checkBounds checks the load's numbers, and that it ends by itself.
func (l *LoadSpec) checkBounds(es *field.Errors) {
	if l.Concurrency < 0 {
		es.Add("load.concurrency", "must be >= 1 (or 0, the default: 1 in closed loop, rate × timeout at most 256 in open loop), got %d", l.Concurrency)
	}
	if l.Rate < 0 || l.Rate != l.Rate {
		es.Add("load.rate", "must be >= 0 (0 = closed loop), got %g", l.Rate)
	}
	if l.Duration < 0 {
		es.Add("load.duration", "must be >= 0, got %s", l.Duration)
	}
	if l.Duration == 0 && l.Requests == 0 {
		es.Add("load", "set {load.duration} or {load.requests} (or both): a soak must end by itself")
	}
	if l.Timeout <= 0 {
		es.Add("load.timeout", "must be > 0, got %s", l.Timeout)
	}
}

func (l *LoadSpec) checkEndpoints(es *field.Errors) {
	switch {
	case l.URL == "" && l.TargetsFile == "":
		es.Add("load.url", "required (or {load.targets_file}): the URL to soak, e.g. http://127.0.0.1:8080/")
	case l.URL != "" && l.TargetsFile != "":
		es.Add("load.targets_file", "set {load.url} or {load.targets_file}, not both")
	case l.URL != "":
		checkHTTPURL(es, "load.url", l.URL)
	default:
		if err := readable(l.TargetsFile); err != nil {
			es.Add("load.targets_file", "%v", err)
		} else if _, err := load.ParseTargetsFile(l.TargetsFile); err != nil {
			es.Add("load.targets_file", "%v", err)
		}
		if l.Body != "" {
			es.Add("load.body", "not used with {load.targets_file} (give bodies there as @FILE)")
		}
	}
	if name, ok := strings.CutPrefix(l.Body, "@"); ok {
		if err := readable(name); err != nil {
			es.Add("load.body", "%v", err)
		}
	}
}

// checkHTTPURL checks an absolute http(s) URL by urlx's rule.
func checkHTTPURL(es *field.Errors, path, raw string) {
	if _, err := urlx.Parse(raw, urlx.HTTP); err != nil {
		es.Add(path, "%v", err)
	}
}

// readable says why the file at path cannot be read, or nil.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	return f.Close()
}

// regexpError is the short cause of a regexp compile error.
func regexpError(err error) string {
	if se, ok := err.(*syntax.Error); ok {
		return string(se.Code)
	}
	return err.Error()
}

func validStatus(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) == 3 && s[1:] == "xx" && s[0] >= '1' && s[0] <= '5' {
		return true
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 100 && n <= 599
}

func (s *SamplingSpec) check(es *field.Errors) {
	if s.Interval != 0 && s.Interval < MinInterval {
		es.Add("sampling.interval", "must be at least %s, or 0 to pace it to the run, got %s", MinInterval, s.Interval)
	}
	if s.SmapsInterval < 0 {
		es.Add("sampling.smaps_interval", "must be > 0, or 0 to pace it to the load's duration; got %s (turn {sampling.smaps} off to never read smaps_rollup)", s.SmapsInterval)
	}
	if s.TopN < 0 {
		es.Add("sampling.top_n", "must be >= 0, got %d", s.TopN)
	}
}

func (p *PhasesSpec) check(es *field.Errors) {
	if _, err := ParseWarmup(p.Warmup); err != nil {
		es.Add("phases.warmup", "%v", err)
	}
	if p.Cooldown < 0 {
		es.Add("phases.cooldown", "must be >= 0, got %s", p.Cooldown)
	}
	if p.Baseline < 0 {
		es.Add("phases.baseline", "must be >= 0 (0 skips it), got %s", p.Baseline)
	}
}

func (t *ThresholdsSpec) check(es *field.Errors) {
	if !(t.Alpha > 0 && t.Alpha < 0.5) {
		es.Add("thresholds.alpha", "must be between 0 and 0.5 (exclusive), got %g", t.Alpha)
	}
	if !(t.LeakBytesPerRequest >= 0) {
		es.Add("thresholds.leak_bytes_per_request", "must be >= 0, got %g", t.LeakBytesPerRequest)
	}
	if !(t.LeakFDsPerRequest >= 0) {
		es.Add("thresholds.leak_fds_per_request", "must be >= 0, got %g", t.LeakFDsPerRequest)
	}
	if _, err := humanize.ParseBytes(t.LeakMinGrowth); err != nil {
		es.Add("thresholds.leak_min_growth", "%q: want a size such as 1MiB or 500KB", t.LeakMinGrowth)
	}
	if t.MemLimit != "" {
		if _, err := humanize.ParseBytes(t.MemLimit); err != nil {
			es.Add("thresholds.mem_limit", "%q: want a size such as 512MiB or 2GB, or none for the cgroup's memory.max", t.MemLimit)
		}
	}
	if t.LeakHorizon <= 0 {
		es.Add("thresholds.leak_horizon", "must be > 0, e.g. 24h; got %s", t.LeakHorizon)
	}
	if g, err := humanize.ParseBytes(t.LeakHorizonGrowth); err != nil || g == 0 {
		es.Add("thresholds.leak_horizon_growth", "%q: want a size > 0 such as 64MiB", t.LeakHorizonGrowth)
	}
	if !(t.LeakHorizonFDs > 0) {
		es.Add("thresholds.leak_horizon_fds", "must be > 0, e.g. 1000; got %g", t.LeakHorizonFDs)
	}
	if !(t.LeakLimitShare > 0 && t.LeakLimitShare <= 1) {
		es.Add("thresholds.leak_limit_share", "must be > 0 and <= 1, e.g. 0.1; got %g", t.LeakLimitShare)
	}
	if t.ExhaustionWithin <= 0 {
		es.Add("thresholds.exhaustion_within", "must be > 0, e.g. 168h; got %s", t.ExhaustionWithin)
	}
	if t.Transient <= 0 {
		es.Add("thresholds.transient", "must be > 0, e.g. 10m; got %s", t.Transient)
	}
	t.checkHealth(es)
}

// checkHealth checks the thresholds of the requests' health.
func (t *ThresholdsSpec) checkHealth(es *field.Errors) {
	if _, err := ParseShare(t.MaxErrorRate); err != nil {
		es.Add("thresholds.max_error_rate", "%v", err)
	}
	if _, err := ParseShare(t.MaxWindowErrorRate); err != nil {
		es.Add("thresholds.max_window_error_rate", "%v", err)
	}
	if t.ErrorWindow <= 0 {
		es.Add("thresholds.error_window", "must be > 0, e.g. 60s; got %s", t.ErrorWindow)
	}
	if _, _, err := ParseUnavailable(t.MaxUnavailable); err != nil {
		es.Add("thresholds.max_unavailable", "%v", err)
	}
}

// Options checks the spec and turns it into a run's options: Load,
// Target, NoProbe, Sampler, Interval, Baseline, Warmup, Cooldown, the
// thresholds and MemLimit. The caller adds Log, Progress, OutDir,
// OnRecord and the like. It reads the targets file and a body @FILE, so
// a daemon calls it for each run to pick up their current content.
func (s *Spec) Options() (Options, error) {
	var o Options
	if err := s.Check().Err(); err != nil {
		return o, err
	}
	l, err := s.Load.options()
	if err != nil {
		return o, err
	}
	o.Load = l
	t := s.Target
	o.Target = t.Spec
	o.Target.URL = l.Endpoints[0].URL
	o.NoProbe, o.DeadGrace, o.Remote = t.NoProbe, t.DeadGrace, t.Remote
	o.FollowUpstreams = t.FollowUpstreams
	o.FixedMix = s.Load.Attribute == "off"
	o.Interval = s.Sampling.Interval
	o.Sampler = probes.SamplerOptions{SmapsInterval: s.Sampling.SmapsInterval, TopN: s.Sampling.TopN}
	if !s.Sampling.Smaps {
		o.Sampler.SmapsInterval = -1
	}
	o.Warmup, _ = ParseWarmup(s.Phases.Warmup) // checked
	o.Cooldown = s.Phases.Cooldown
	o.Baseline = s.Phases.Baseline
	if o.Baseline == 0 {
		o.Baseline = -1 // skipped
	}
	ao, _ := s.Thresholds.Analysis() // checked
	o.Memory, o.FDs, o.MemLimit, o.Health = ao.Memory, ao.FDs, ao.MemLimit, ao.Health
	o.Health.Timeout = s.Load.Timeout.Seconds() // the least time unavailable that fails a run by its share
	s.Where.options(&o)
	o.UntilDecided = s.UntilDecided
	return o, nil
}

// options builds the load engine's options. A targets file or a body file
// that changed since Check can still fail here; the error names the field.
func (l *LoadSpec) options() (load.Options, error) {
	o := load.Options{
		ContentType: l.ContentType, Concurrency: l.Concurrency, Rate: l.Rate,
		Requests: l.Requests, Duration: l.Duration, KeepAlive: l.KeepAlive, Timeout: l.Timeout,
		ExpectStatus: l.ExpectStatus, CheckLength: l.CheckLength, InsecureTLS: l.Insecure,
	}
	if l.TargetsFile != "" {
		eps, err := load.ParseTargetsFile(l.TargetsFile)
		if err != nil {
			return o, field.Errors{{Path: "load.targets_file", Msg: err.Error()}}
		}
		o.Endpoints = eps
	} else {
		body, err := load.ParseBody(l.Body)
		if err != nil {
			return o, field.Errors{{Path: "load.body", Msg: err.Error()}}
		}
		o.Endpoints = []load.Endpoint{{Weight: 1, Method: strings.ToUpper(l.Method), URL: l.URL, Body: body}}
	}
	for _, h := range l.Headers {
		hd, _ := load.ParseHeader(h) // checked
		o.Headers = append(o.Headers, hd)
	}
	if l.ExpectBody != "" {
		o.ExpectBody = regexp.MustCompile(l.ExpectBody) // checked
	}
	return o, nil
}

// Analysis turns the thresholds into the analysis' options; soakd analyze
// uses it alone. Its errors are Check's.
func (t *ThresholdsSpec) Analysis() (analysis.Options, error) {
	var ao analysis.Options
	var es field.Errors
	t.check(&es)
	if len(es) > 0 {
		return ao, es
	}
	if t.MemLimit != "" {
		ao.MemLimit, _ = humanize.ParseBytes(t.MemLimit)
	}
	growth, _ := humanize.ParseBytes(t.LeakMinGrowth)
	hGrowth, _ := humanize.ParseBytes(t.LeakHorizonGrowth)
	horizon := verdict.Thresholds{Horizon: t.LeakHorizon.Seconds(), HorizonLimitShare: t.LeakLimitShare,
		Exhaustion: t.ExhaustionWithin.Seconds(), Transient: t.Transient.Seconds()}
	ao.Memory, ao.FDs = horizon, horizon
	ao.Memory.Alpha, ao.Memory.MinPerRequest, ao.Memory.MinTotal = t.Alpha, t.LeakBytesPerRequest, float64(growth)
	ao.Memory.HorizonGrowth = float64(hGrowth)
	ao.FDs.Alpha, ao.FDs.MinPerRequest, ao.FDs.MinTotal = t.Alpha, t.LeakFDsPerRequest, verdict.FDThresholds.MinTotal
	ao.FDs.HorizonGrowth = t.LeakHorizonFDs
	ao.Health = verdict.DefaultHealth
	ao.Health.MaxRate, _ = ParseShare(t.MaxErrorRate)
	ao.Health.MaxWindowRate, _ = ParseShare(t.MaxWindowErrorRate)
	ao.Health.Window, ao.Health.Alpha = t.ErrorWindow.Seconds(), t.Alpha
	sh, d, _ := ParseUnavailable(t.MaxUnavailable)
	ao.Health.MaxUnavailableShare, ao.Health.MaxUnavailable = sh, d.Seconds()
	return ao, nil
}
