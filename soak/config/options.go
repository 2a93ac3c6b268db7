package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

// Options turns the job into soak options, as `soakd run` turns its flags:
// Load, Target, NoProbe, Sampler, Interval, Baseline, Warmup, Cooldown,
// Memory, FDs and MemLimit. The daemon adds Log, OnRecord, OutDir and the like. It
// reads the targets file and a body @FILE, so call it for each run to pick
// up their current content.
func (j *Job) Options() (soak.Options, error) {
	var o soak.Options
	l, err := j.Load.options()
	if err != nil {
		return o, fmt.Errorf("job %s: %w", j.Name, err)
	}
	o.Load = l
	t := j.Target
	o.Target = probes.Spec{
		PID: t.PID, PIDFile: t.PIDFile, Match: t.Match, Unit: t.Unit, Exec: t.Exec,
		ExecLog: t.ExecLog, ExecShow: t.ExecShow, ReadyTimeout: t.ReadyTimeout, StopGrace: t.StopGrace,
		URL: l.Endpoints[0].URL,
	}
	o.NoProbe = t.NoProbe
	o.Remote = t.Remote
	o.Interval = j.Sampling.Interval
	o.Sampler = probes.SamplerOptions{SmapsInterval: j.Sampling.SmapsInterval, TopN: j.Sampling.TopN}
	if !j.Sampling.Smaps {
		o.Sampler.SmapsInterval = -1
	}
	if o.Warmup, err = soak.ParseWarmup(j.Phases.Warmup); err != nil {
		return o, fmt.Errorf("job %s: phases.warmup %w", j.Name, err)
	}
	o.Cooldown = j.Phases.Cooldown
	o.Baseline = j.Phases.Baseline
	if o.Baseline == 0 {
		o.Baseline = -1 // skipped
	}
	if err := j.Thresholds.apply(&o); err != nil {
		return o, fmt.Errorf("job %s: thresholds.%w", j.Name, err)
	}
	return o, nil
}

// options builds the load engine's options.
func (l *LoadConfig) options() (load.Options, error) {
	o := load.Options{
		ContentType: l.ContentType, Concurrency: l.Concurrency, Rate: l.Rate,
		Requests: l.Requests, Duration: l.Duration, KeepAlive: l.KeepAlive, Timeout: l.Timeout,
		ExpectStatus: l.ExpectStatus, CheckLength: l.CheckLength, InsecureTLS: l.Insecure,
	}
	switch {
	case l.TargetsFile != "":
		eps, err := load.ParseTargetsFile(l.TargetsFile)
		if err != nil {
			return o, fmt.Errorf("load.targets_file: %w", err)
		}
		o.Endpoints = eps
	case l.URL != "":
		body, err := load.ParseBody(l.Body)
		if err != nil {
			return o, fmt.Errorf("load.body: %w", err)
		}
		o.Endpoints = []load.Endpoint{{Weight: 1, Method: l.Method, URL: l.URL, Body: body}}
	default:
		return o, errors.New("load: set url or targets_file")
	}
	for _, h := range l.Headers {
		hd, err := load.ParseHeader(h)
		if err != nil {
			return o, fmt.Errorf("load.headers: %w", err)
		}
		o.Headers = append(o.Headers, hd)
	}
	if l.ExpectBody != "" {
		re, err := regexp.Compile(l.ExpectBody)
		if err != nil {
			return o, fmt.Errorf("load.expect_body: %w", err)
		}
		o.ExpectBody = re
	}
	return o, nil
}

// apply sets the verdict thresholds and the memory limit, as `soakd run`.
func (t *ThresholdsConfig) apply(o *soak.Options) error {
	growth, err := humanize.ParseBytes(t.LeakMinGrowth)
	if err != nil {
		return fmt.Errorf("leak_min_growth %q: want a size such as 1MiB", t.LeakMinGrowth)
	}
	if t.MemLimit != "" {
		if o.MemLimit, err = humanize.ParseBytes(t.MemLimit); err != nil {
			return fmt.Errorf("mem_limit %q: want a size such as 512MiB", t.MemLimit)
		}
	}
	hGrowth, err := humanize.ParseBytes(t.LeakHorizonGrowth)
	if err != nil {
		return fmt.Errorf("leak_horizon_growth %q: want a size such as 64MiB", t.LeakHorizonGrowth)
	}
	horizon := verdict.Thresholds{Horizon: t.LeakHorizon.Seconds(), HorizonLimitShare: t.LeakLimitShare, Exhaustion: t.ExhaustionWithin.Seconds()}
	o.Memory, o.FDs = horizon, horizon
	o.Memory.Alpha, o.Memory.MinPerRequest, o.Memory.MinTotal = t.Alpha, t.LeakBytesPerRequest, float64(growth)
	o.Memory.HorizonGrowth = float64(hGrowth)
	o.FDs.Alpha, o.FDs.MinPerRequest, o.FDs.MinTotal = t.Alpha, t.LeakFDsPerRequest, verdict.FDThresholds.MinTotal
	o.FDs.HorizonGrowth = t.LeakHorizonFDs
	return nil
}

// Token returns the bearer token: token, or the content of token_file
// (surrounding white space trimmed). "" means none is set.
func (c *Config) Token() (string, error) {
	if c.BearerToken != "" || c.TokenFile == "" {
		return c.BearerToken, nil
	}
	b, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return "", fmt.Errorf("token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token_file %s: empty", c.TokenFile)
	}
	return tok, nil
}

// ListenIsLoopback reports whether listen binds to loopback only:
// localhost, 127.0.0.0/8 or ::1.
func (c *Config) ListenIsLoopback() bool {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
