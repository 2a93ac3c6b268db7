package main

import (
	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/runner"
)

// declareThresholds adds the verdict's threshold flags to fs, bound to
// t's fields; their defaults are t's values (runner.DefaultThresholds).
// `soakd run` and `soakd analyze` both declare them here, so the two
// cannot drift apart.
func declareThresholds(fs *pflag.FlagSet, t *runner.ThresholdsSpec) {
	for _, d := range []struct {
		path, name, usage string
		declare           func(name, usage string)
	}{
		{"thresholds.mem_limit", "mem-limit", "memory limit for the time to exhaustion, e.g. 2GiB (default: the cgroup's memory.max)",
			func(n, u string) { fs.StringVar(&t.MemLimit, n, t.MemLimit, u) }},
		{"thresholds.leak_bytes_per_request", "leak-bytes-per-request", "a memory leak's 95% CI lower bound must exceed this, bytes per request",
			func(n, u string) { fs.Float64Var(&t.LeakBytesPerRequest, n, t.LeakBytesPerRequest, u) }},
		{"thresholds.leak_min_growth", "leak-min-growth", "a memory leak must grow at least this much over the soak",
			func(n, u string) { fs.StringVar(&t.LeakMinGrowth, n, t.LeakMinGrowth, u) }},
		{"thresholds.leak_fds_per_request", "leak-fds-per-request", "an fd leak's 95% CI lower bound must exceed this, fds per request",
			func(n, u string) { fs.Float64Var(&t.LeakFDsPerRequest, n, t.LeakFDsPerRequest, u) }},
		{"thresholds.alpha", "alpha", "significance level of the trend test",
			func(n, u string) { fs.Float64Var(&t.Alpha, n, t.Alpha, u) }},
		{"thresholds.leak_horizon", "leak-horizon", "growth is projected over this much time at the observed throughput",
			func(n, u string) { fs.DurationVar(&t.LeakHorizon, n, t.LeakHorizon, u) }},
		{"thresholds.leak_horizon_growth", "leak-horizon-growth", "memory growth over the horizon that makes a leak",
			func(n, u string) { fs.StringVar(&t.LeakHorizonGrowth, n, t.LeakHorizonGrowth, u) }},
		{"thresholds.leak_horizon_fds", "leak-horizon-fds", "fd growth over the horizon that makes a leak",
			func(n, u string) { fs.Float64Var(&t.LeakHorizonFDs, n, t.LeakHorizonFDs, u) }},
		{"thresholds.leak_limit_share", "leak-limit-share", "growth over the horizon of this share of the limit makes a leak",
			func(n, u string) { fs.Float64Var(&t.LeakLimitShare, n, t.LeakLimitShare, u) }},
		{"thresholds.exhaustion_within", "exhaustion-within", "reaching a limit within this long at the observed rate makes a leak",
			func(n, u string) { fs.DurationVar(&t.ExhaustionWithin, n, t.ExhaustionWithin, u) }},
		{"thresholds.max_error_rate", "max-error-rate", "the run is failing (exit 5) when more than this share of its requests failed, e.g. 1% or 0.01",
			func(n, u string) { fs.StringVar(&t.MaxErrorRate, n, t.MaxErrorRate, u) }},
		{"thresholds.max_window_error_rate", "max-window-error-rate", "the run is failing when more than this share failed in any --error-window (of at least 20 requests)",
			func(n, u string) { fs.StringVar(&t.MaxWindowErrorRate, n, t.MaxWindowErrorRate, u) }},
		{"thresholds.error_window", "error-window", "the window of --max-window-error-rate",
			func(n, u string) { fs.DurationVar(&t.ErrorWindow, n, t.ErrorWindow, u) }},
		{"thresholds.transient", "transient", "a soak shorter than this is a leak only once growth passes the level at the load's start (a runtime sizing itself to the load grows that much)",
			func(n, u string) { fs.DurationVar(&t.Transient, n, t.Transient, u) }},
	} {
		d.declare(d.name, d.usage)
		bind(fs, d.path, d.name)
	}
}
