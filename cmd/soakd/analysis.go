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
	bound(fs, "thresholds.mem_limit", fs.StringVar, &t.MemLimit, "mem-limit", "memory limit for the time to exhaustion, e.g. 2GiB (default: the cgroup's memory.max)")
	bound(fs, "thresholds.leak_bytes_per_request", fs.Float64Var, &t.LeakBytesPerRequest, "leak-bytes-per-request", "a memory leak's 95% CI lower bound must exceed this, bytes per request")
	bound(fs, "thresholds.leak_min_growth", fs.StringVar, &t.LeakMinGrowth, "leak-min-growth", "a memory leak's interval must prove at least this much growth over the soak")
	bound(fs, "thresholds.leak_fds_per_request", fs.Float64Var, &t.LeakFDsPerRequest, "leak-fds-per-request", "an fd leak's 95% CI lower bound must exceed this, fds per request")
	bound(fs, "thresholds.alpha", fs.Float64Var, &t.Alpha, "alpha", "significance level of the trend test")
	bound(fs, "thresholds.leak_horizon", fs.DurationVar, &t.LeakHorizon, "leak-horizon", "growth is projected over this much time at the observed throughput")
	bound(fs, "thresholds.leak_horizon_growth", fs.StringVar, &t.LeakHorizonGrowth, "leak-horizon-growth", "memory growth over the horizon that makes a leak")
	bound(fs, "thresholds.leak_horizon_fds", fs.Float64Var, &t.LeakHorizonFDs, "leak-horizon-fds", "fd growth over the horizon that makes a leak")
	bound(fs, "thresholds.leak_limit_share", fs.Float64Var, &t.LeakLimitShare, "leak-limit-share", "growth over the horizon of this share of the limit makes a leak")
	bound(fs, "thresholds.exhaustion_within", fs.DurationVar, &t.ExhaustionWithin, "exhaustion-within", "reaching a limit within this long at the observed rate makes a leak")
	bound(fs, "thresholds.max_error_rate", fs.StringVar, &t.MaxErrorRate, "max-error-rate", "the run is failing (exit 5) when more than this share of its requests failed, e.g. 1% or 0.01")
	bound(fs, "thresholds.max_window_error_rate", fs.StringVar, &t.MaxWindowErrorRate, "max-window-error-rate", "the run is failing when more than this share failed in any --error-window (of at least 20 requests)")
	bound(fs, "thresholds.error_window", fs.DurationVar, &t.ErrorWindow, "error-window", "the window of --max-window-error-rate")
	bound(fs, "thresholds.max_unavailable", fs.StringVar, &t.MaxUnavailable, "max-unavailable", "the run is failing (exit 5) when the target answered nothing (stopped, or stalled past --timeout) for longer than this in all: a share of the load (at least one --timeout) or a duration, e.g. 5s")
	bound(fs, "thresholds.transient", fs.DurationVar, &t.Transient, "transient", "a soak shorter than this is a leak only once growth passes the process's size at the load's start (the resource's own level, or for PSS and USS the RSS's when larger; a runtime sizing itself to the load grows that much)")
}
