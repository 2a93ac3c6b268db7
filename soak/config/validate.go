package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// validator checks a decoded config field by field, reporting at each
// field's line. It also resolves relative paths and fills derived
// defaults (external_url, max_duration).
type validator struct {
	cfg  *Config
	errs *errorList
}

func (v validator) run() {
	c := v.cfg
	v.resolvePaths()
	v.checkListen()
	v.checkToken()
	if c.ExternalURL != "" {
		v.checkHTTPURL("external_url", c.ExternalURL)
	} else {
		c.ExternalURL = defaultExternalURL(c.Listen)
	}
	if _, err := zapcore.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		v.errs.add("log_level", "%q: want debug, info, warn or error", c.LogLevel)
	}
	if c.StateDir == "" {
		v.errs.add("state_dir", "must not be empty (default %s)", DefaultStateDir)
	}
	v.nonNegative("retention.max_age", c.Retention.MaxAge.Seconds(), c.Retention.MaxAge.String(), "0 keeps runs of any age")
	v.nonNegative("retention.max_runs_per_job", float64(c.Retention.MaxRunsPerJob), strconv.Itoa(c.Retention.MaxRunsPerJob), "0 keeps any number")
	v.checkAlerts()
	seen := map[string]int{}
	for i := range c.Jobs {
		v.checkJob(i, seen)
	}
}

// resolvePaths makes the file's relative paths relative to its directory.
func (v validator) resolvePaths() {
	c := v.cfg
	dir := filepath.Dir(c.Path)
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	abs(&c.StateDir)
	abs(&c.TokenFile)
	c.Alerts.SetDirectory(dir)
	for i := range c.Jobs {
		j := &c.Jobs[i]
		abs(&j.Load.TargetsFile)
		abs(&j.Target.PIDFile)
		abs(&j.Target.ExecLog)
		abs(&j.Target.Remote.BearerTokenFile)
		abs(&j.Target.Remote.BasicAuthFile)
		abs(&j.Target.Remote.CAFile)
		if name, ok := strings.CutPrefix(j.Load.Body, "@"); ok && name != "" {
			abs(&name)
			j.Load.Body = "@" + name
		}
	}
}

func (v validator) nonNegative(path string, x float64, shown, zero string) {
	if x < 0 {
		v.errs.add(path, "must be >= 0 (%s), got %s", zero, shown)
	}
}

func (v validator) checkListen() {
	c := v.cfg
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		v.errs.add("listen", "%q: want HOST:PORT such as %s", c.Listen, DefaultListen)
		return
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		v.errs.add("listen", "%q: port %q: want 0-65535", c.Listen, port)
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		v.errs.add("listen", "%q: host %q: want an IP address or localhost", c.Listen, host)
	}
}

func (v validator) checkToken() {
	c := v.cfg
	switch c.Auth {
	case "", AuthWrites:
	case AuthAll:
		if c.BearerToken == "" && c.TokenFile == "" {
			v.errs.add("auth", "\"all\" needs a token: set token or token_file")
		}
	default:
		v.errs.add("auth", "must be %q (the token guards calls that change anything) or %q (reads too), got %q", AuthWrites, AuthAll, c.Auth)
	}
	switch {
	case c.BearerToken != "" && c.TokenFile != "":
		v.errs.add("token_file", "set token or token_file, not both")
		return
	case c.TokenFile != "":
		b, err := os.ReadFile(c.TokenFile)
		var pe *os.PathError
		switch {
		case errors.As(err, &pe):
			v.errs.add("token_file", "cannot read %s: %v", c.TokenFile, pe.Err)
		case err != nil:
			v.errs.add("token_file", "cannot read %s: %v", c.TokenFile, err)
		case strings.TrimSpace(string(b)) == "":
			v.errs.add("token_file", "%s is empty", c.TokenFile)
		}
		return
	case c.BearerToken == "" && validHostPort(c.Listen) && !c.ListenIsLoopback():
		v.errs.add("listen", "%q is not a loopback address: set token or token_file (calls that change anything then need \"Authorization: Bearer TOKEN\")", c.Listen)
	}
	if strings.ContainsAny(c.BearerToken.Reveal(), " \t\r\n") {
		v.errs.add("token", "must not contain spaces or line breaks")
	}
}

// lastName words a spec's field path as the file's key: its last name.
func lastName(path string) string { return path[strings.LastIndex(path, ".")+1:] }

// checkHTTPURL checks an absolute http(s) URL by urlx's rule.
func (v validator) checkHTTPURL(path, raw string) {
	if _, err := urlx.Parse(raw, urlx.HTTP); err != nil {
		v.errs.add(path, "%v", err)
	}
}

func validHostPort(s string) bool {
	_, _, err := net.SplitHostPort(s)
	return err == nil
}

// defaultExternalURL is http://<listen>, with the host name for an
// unspecified address; "" (no links in alerts) when listen leaves the
// port to the kernel (port 0), which no reader can reach.
func defaultExternalURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if port == "0" {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// checkAlerts validates the alerts section with the alerts package,
// whose field errors carry their path (alerts.sinks[1].url), and builds
// its sinks to read their secret files.
func (v validator) checkAlerts() {
	c := &v.cfg.Alerts
	err := c.Validate()
	if err == nil {
		_, err = alerts.Build(*c, alerts.BuildOptions{})
	}
	es := field.As(err)
	for _, e := range es {
		v.errs.add(e.Path, "%s", e.Text(func(p string) string { return p }))
	}
	if err != nil && es == nil {
		v.errs.add("alerts", "%v", err)
	}
	if c.ExternalURL == "" {
		c.ExternalURL = v.cfg.ExternalURL
	}
}

var jobNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

func (v validator) checkJob(i int, seen map[string]int) {
	j := &v.cfg.Jobs[i]
	p := fmt.Sprintf("jobs[%d]", i)
	v.checkJobName(i, j.Name, seen)
	if err := checkSchedule(j.Schedule); err != nil && j.Schedule != "" {
		v.errs.add(p+".schedule", "%v", err)
	}
	if _, err := loadLocation(j.Timezone); err != nil {
		v.errs.add(p+".timezone", "%q: unknown time zone (want an IANA name such as Europe/Berlin, or UTC, or Local)", j.Timezone)
	}
	v.checkRoute(p+".alerts", j.Alerts)
	if v.checkKind(p, j) {
		return
	}
	v.checkUntil(p, j)
	for _, e := range j.Spec.Check() {
		v.errs.add(p+"."+e.Path, "%s", e.Text(lastName))
	}
	v.checkMaxDuration(p, j)
	if len(v.errs.errs) == 0 {
		if _, err := j.Options(); err != nil {
			v.errs.add(p, "%v", err)
		}
	}
}

// checkKind checks jobs[i].kind and, for a sweep, the whole job; it
// returns true when it checked the job.
func (v validator) checkKind(p string, j *Job) bool {
	switch j.Kind {
	case "", KindSoak:
		return false
	case KindSweep:
		if j.UntilDecided {
			v.errs.add(p+".until_decided", "a sweep's levels each run to their bound; until_decided is for soaks: drop one")
			return true
		}
	default:
		v.errs.add(p+".kind", "%q: want soak (the default) or sweep", j.Kind)
		return true
	}
	errs := append(j.Sweep.Check(), j.Spec.Check()...)
	for _, e := range errs {
		if e.Path == "load" { // a sweep's levels bound its load
			continue
		}
		v.errs.add(p+"."+e.Path, "%s", e.Text(lastName))
	}
	switch {
	case j.MaxDuration < 0:
		v.errs.add(p+".max_duration", "must be > 0, got %s", j.MaxDuration)
	case j.MaxDuration == 0:
		j.MaxDuration = j.Sweep.Budget() + j.Target.ReadyTimeout + DefaultSchedulingSlack
	}
	if len(v.errs.errs) == 0 {
		if _, err := j.SweepOptions(); err != nil {
			v.errs.add(p, "%v", err)
		}
	}
	return true
}

// checkJobName checks jobs[i].name; seen maps the names so far to their
// index.
func (v validator) checkJobName(i int, name string, seen map[string]int) {
	p := fmt.Sprintf("jobs[%d].name", i)
	switch {
	case name == "":
		v.errs.add(p, "required: letters, digits, '_', '.', '-'")
	case !jobNameRE.MatchString(name):
		v.errs.add(p, "%q: use letters, digits, '_', '.', '-'", name)
	default:
		if first, dup := seen[name]; dup {
			v.errs.add(p, "%q already used by jobs[%d]", name, first)
		}
		seen[name] = i
	}
}

func (v validator) checkRoute(path string, names []string) {
	var known []string
	for _, s := range v.cfg.Alerts.Sinks {
		known = append(known, s.Name)
	}
	seen := map[string]bool{}
	for i, n := range names {
		ip := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case seen[n]:
			v.errs.add(ip, "sink %q listed twice", n)
		case !contains(known, n) && len(known) == 0:
			v.errs.add(ip, "unknown sink %q: alerts.sinks defines none", n)
		case !contains(known, n):
			v.errs.add(ip, "unknown sink %q (alerts.sinks defines: %s)", n, strings.Join(known, ", "))
		}
		seen[n] = true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkUntil checks an until-decided job: max_duration is the most its
// run may take, so it is required; a load with no bound of its own then
// runs at most max_duration less the baseline, the cool-down, the ready
// timeout and a tenth of max_duration (the start and the report), and
// stops as soon as the run is decided.
func (v validator) checkUntil(p string, j *Job) {
	if !j.UntilDecided {
		return
	}
	bounded := j.Load.Duration > 0 || j.Load.Requests > 0
	d := j.MaxDuration - j.MaxDuration/10 - j.Phases.Baseline - j.Phases.Cooldown - j.Target.ReadyTimeout
	switch {
	case j.MaxDuration <= 0:
		v.errs.add(p+".max_duration", "required with until_decided: the most the run may take, e.g. 30m")
	case bounded:
		return
	case d < time.Minute:
		v.errs.add(p+".max_duration", "%s leaves the load %s after phases.baseline, phases.cooldown, target.ready_timeout and a tenth for the start and the report; until_decided needs at least 1m: raise max_duration", j.MaxDuration, max(d, 0))
	default:
		j.Load.Duration = d.Truncate(time.Second)
		return
	}
	if !bounded {
		// A stand-in, so that the load's and max_duration's own checks
		// do not repeat the error above.
		j.Load.Duration, j.MaxDuration = time.Minute, max(j.MaxDuration, time.Hour)
	}
}

func (v validator) checkMaxDuration(p string, j *Job) {
	budget := j.Load.Duration + j.Phases.Baseline + j.Phases.Cooldown
	switch {
	case j.MaxDuration < 0:
		v.errs.add(p+".max_duration", "must be > 0, got %s", j.MaxDuration)
	case j.MaxDuration == 0 && j.Load.Duration == 0:
		v.errs.add(p+".max_duration", "required when load.duration is not set: a cap on the whole run, e.g. 2h")
	case j.MaxDuration == 0:
		j.MaxDuration = budget + j.Target.ReadyTimeout + DefaultSchedulingSlack
	case j.Load.Duration > 0 && j.MaxDuration < budget:
		v.errs.add(p+".max_duration", "%s is shorter than phases.baseline + load.duration + phases.cooldown (%s)", j.MaxDuration, budget)
	}
}
