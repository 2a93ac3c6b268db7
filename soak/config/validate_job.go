package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak"
	"github.com/soakd/soakd/soak/load"
)

func (v validator) checkTarget(p string, t *TargetConfig) {
	kinds := t.kinds()
	if len(kinds) > 1 {
		v.errs.add(p+"."+kinds[1], "set only one of pid, pidfile, match, unit, exec (also set: %s)", kinds[0])
	}
	if t.NoProbe && len(kinds) > 0 {
		v.errs.add(p+".no_probe", "no_probe samples no target, but %s is set: drop one", kinds[0])
	}
	v.checkRemote(p, t, kinds)
	if t.PID < 0 {
		v.errs.add(p+".pid", "must be > 0, got %d", t.PID)
	}
	if t.Match != "" {
		if _, err := regexp.Compile(t.Match); err != nil {
			v.errs.add(p+".match", "%q: bad regexp: %s", t.Match, regexpError(err))
		}
	}
	if t.Exec == "" {
		if t.ExecLog != "" {
			v.errs.add(p+".exec_log", "only with exec")
		}
		if t.ExecShow {
			v.errs.add(p+".exec_show", "only with exec")
		}
	}
	if t.ReadyTimeout <= 0 {
		v.errs.add(p+".ready_timeout", "must be > 0, got %s", t.ReadyTimeout)
	}
	if t.StopGrace < 0 {
		v.errs.add(p+".stop_grace", "must be >= 0, got %s", t.StopGrace)
	}
}

// kinds lists the target kinds that are set, in field order.
func (t *TargetConfig) kinds() []string {
	var k []string
	for _, c := range []struct {
		name string
		set  bool
	}{{"pid", t.PID != 0}, {"pidfile", t.PIDFile != ""}, {"match", t.Match != ""}, {"unit", t.Unit != ""}, {"exec", t.Exec != ""}} {
		if c.set {
			k = append(k, c.name)
		}
	}
	return k
}

var methodRE = regexp.MustCompile(`^[A-Z]+$`)

func (v validator) checkLoad(p string, l *LoadConfig) {
	v.checkEndpoints(p, l)
	if !methodRE.MatchString(l.Method) {
		v.errs.add(p+".method", "%q: want an upper-case method such as GET or POST", l.Method)
	}
	for i, h := range l.Headers {
		if _, err := load.ParseHeader(h); err != nil {
			v.errs.add(fmt.Sprintf("%s.headers[%d]", p, i), "%q: want \"Name: value\"", h)
		}
	}
	if strings.ContainsAny(l.ContentType, "\r\n") {
		v.errs.add(p+".content_type", "must not contain line breaks")
	}
	v.checkLoadBounds(p, l)
	for i, s := range l.ExpectStatus {
		if !validStatus(s) {
			v.errs.add(fmt.Sprintf("%s.expect_status[%d]", p, i), "%q: want a status code 100-599 or a class such as 2xx", s)
		}
	}
	if _, err := regexp.Compile(l.ExpectBody); err != nil {
		v.errs.add(p+".expect_body", "%q: bad regexp: %s", l.ExpectBody, regexpError(err))
	}
}

// checkLoadBounds checks the load's numbers, and that it ends by itself.
func (v validator) checkLoadBounds(p string, l *LoadConfig) {
	if l.Concurrency < 1 {
		v.errs.add(p+".concurrency", "must be >= 1, got %d", l.Concurrency)
	}
	if l.Rate < 0 {
		v.errs.add(p+".rate", "must be >= 0 (0 = closed loop), got %g", l.Rate)
	}
	if l.Duration < 0 {
		v.errs.add(p+".duration", "must be >= 0, got %s", l.Duration)
	}
	if l.Duration == 0 && l.Requests == 0 {
		v.errs.add(p, "set duration or requests (or both): a soak must end by itself")
	}
	if l.Timeout <= 0 {
		v.errs.add(p+".timeout", "must be > 0, got %s", l.Timeout)
	}
}

func (v validator) checkEndpoints(p string, l *LoadConfig) {
	switch {
	case l.URL == "" && l.TargetsFile == "":
		v.errs.add(p+".url", "required (or targets_file): the URL to soak, e.g. http://127.0.0.1:8080/")
	case l.URL != "" && l.TargetsFile != "":
		v.errs.add(p+".targets_file", "set url or targets_file, not both")
	case l.URL != "":
		v.checkHTTPURL(p+".url", l.URL)
	default:
		if err := readable(l.TargetsFile); err != nil {
			v.errs.add(p+".targets_file", "%v", err)
		} else if _, err := load.ParseTargetsFile(l.TargetsFile); err != nil {
			v.errs.add(p+".targets_file", "%v", err)
		}
		if l.Body != "" {
			v.errs.add(p+".body", "not used with targets_file (give bodies there as @FILE)")
		}
	}
	if name, ok := strings.CutPrefix(l.Body, "@"); ok {
		if err := readable(name); err != nil {
			v.errs.add(p+".body", "%v", err)
		}
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

func (v validator) checkSampling(p string, s *SamplingConfig) {
	if s.Interval != 0 && s.Interval < soak.MinInterval {
		v.errs.add(p+".interval", "must be at least %s, or 0 to pace it to the run, got %s", soak.MinInterval, s.Interval)
	}
	if s.SmapsInterval <= 0 {
		v.errs.add(p+".smaps_interval", "must be > 0, got %s (set smaps: false to never read smaps_rollup)", s.SmapsInterval)
	}
	if s.TopN < 0 {
		v.errs.add(p+".top_n", "must be >= 0, got %d", s.TopN)
	}
}

func (v validator) checkPhases(p string, ph *PhasesConfig) {
	if _, err := soak.ParseWarmup(ph.Warmup); err != nil {
		v.errs.add(p+".warmup", "%v", err)
	}
	if ph.Cooldown < 0 {
		v.errs.add(p+".cooldown", "must be >= 0, got %s", ph.Cooldown)
	}
	if ph.Baseline < 0 {
		v.errs.add(p+".baseline", "must be >= 0 (0 skips it), got %s", ph.Baseline)
	}
}

func (v validator) checkThresholds(p string, t *ThresholdsConfig) {
	if t.Alpha <= 0 || t.Alpha >= 0.5 {
		v.errs.add(p+".alpha", "must be between 0 and 0.5 (exclusive), got %g", t.Alpha)
	}
	if t.LeakBytesPerRequest < 0 {
		v.errs.add(p+".leak_bytes_per_request", "must be >= 0, got %g", t.LeakBytesPerRequest)
	}
	if t.LeakFDsPerRequest < 0 {
		v.errs.add(p+".leak_fds_per_request", "must be >= 0, got %g", t.LeakFDsPerRequest)
	}
	if _, err := humanize.ParseBytes(t.LeakMinGrowth); err != nil {
		v.errs.add(p+".leak_min_growth", "%q: want a size such as 1MiB or 500KB", t.LeakMinGrowth)
	}
	if t.MemLimit != "" {
		if _, err := humanize.ParseBytes(t.MemLimit); err != nil {
			v.errs.add(p+".mem_limit", "%q: want a size such as 512MiB or 2GB, or \"\" for the cgroup's memory.max", t.MemLimit)
		}
	}
	v.checkHorizon(p, t)
}

// checkHorizon checks the horizon and exhaustion floors.
func (v validator) checkHorizon(p string, t *ThresholdsConfig) {
	if t.LeakHorizon <= 0 {
		v.errs.add(p+".leak_horizon", "must be > 0, e.g. 24h; got %s", t.LeakHorizon)
	}
	if g, err := humanize.ParseBytes(t.LeakHorizonGrowth); err != nil || g == 0 {
		v.errs.add(p+".leak_horizon_growth", "%q: want a size > 0 such as 64MiB", t.LeakHorizonGrowth)
	}
	if t.LeakHorizonFDs <= 0 {
		v.errs.add(p+".leak_horizon_fds", "must be > 0, e.g. 1000; got %g", t.LeakHorizonFDs)
	}
	if t.LeakLimitShare <= 0 || t.LeakLimitShare > 1 {
		v.errs.add(p+".leak_limit_share", "must be > 0 and <= 1, e.g. 0.1; got %g", t.LeakLimitShare)
	}
	if t.ExhaustionWithin <= 0 {
		v.errs.add(p+".exhaustion_within", "must be > 0, e.g. 168h; got %s", t.ExhaustionWithin)
	}
}

// checkRemote checks the remote source: its own fields, and that it is
// the job's only way to sample (exec may still start the target).
func (v validator) checkRemote(p string, t *TargetConfig, kinds []string) {
	if err := t.Remote.Validate(); err != nil {
		var fe *remote.FieldError
		if errors.As(err, &fe) {
			v.errs.add(p+".remote."+fe.Field, "%s", fe.Err.Error())
		} else {
			v.errs.add(p+".remote", "%s", err.Error())
		}
		return
	}
	if !t.Remote.Enabled() {
		return
	}
	if t.NoProbe {
		v.errs.add(p+".no_probe", "no_probe samples nothing, but remote is set: drop one")
	}
	for _, k := range kinds {
		if k != "exec" {
			v.errs.add(p+"."+k, "remote samples the target through its metrics; %s picks a local process to sample instead: drop one", k)
		}
	}
}
