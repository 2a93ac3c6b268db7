package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// analysisFlags are the flags that judge a run's samples. `soakd run` and
// `soakd analyze` both declare them through this one type, so the two
// cannot drift apart.
type analysisFlags struct {
	memLimit      string
	leakBytes     float64
	leakGrowth    string
	leakFDs       float64
	alpha         float64
	horizon       time.Duration
	horizonGrowth string
	horizonFDs    float64
	limitShare    float64
	exhaustion    time.Duration
}

// size writes bytes as a flag value: 1MiB, 64MiB.
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

// declare adds the analysis flags to fs; their defaults are the verdict
// package's.
func (a *analysisFlags) declare(fs *pflag.FlagSet) {
	mem, fds := verdict.MemoryThresholds, verdict.FDThresholds
	fs.StringVar(&a.memLimit, "mem-limit", "", "memory limit for the time to exhaustion, e.g. 2GiB (default: the cgroup's memory.max)")
	fs.Float64Var(&a.leakBytes, "leak-bytes-per-request", mem.MinPerRequest, "a memory leak's 95% CI lower bound must exceed this, bytes per request")
	fs.StringVar(&a.leakGrowth, "leak-min-growth", size(mem.MinTotal), "a memory leak must grow at least this much over the soak")
	fs.Float64Var(&a.leakFDs, "leak-fds-per-request", fds.MinPerRequest, "an fd leak's 95% CI lower bound must exceed this, fds per request")
	fs.Float64Var(&a.alpha, "alpha", mem.Alpha, "significance level of the trend test")
	fs.DurationVar(&a.horizon, "leak-horizon", seconds(mem.Horizon), "growth is projected over this much time at the observed throughput")
	fs.StringVar(&a.horizonGrowth, "leak-horizon-growth", size(mem.HorizonGrowth), "memory growth over the horizon that makes a leak")
	fs.Float64Var(&a.horizonFDs, "leak-horizon-fds", fds.HorizonGrowth, "fd growth over the horizon that makes a leak")
	fs.Float64Var(&a.limitShare, "leak-limit-share", mem.HorizonLimitShare, "growth over the horizon of this share of the limit makes a leak")
	fs.DurationVar(&a.exhaustion, "exhaustion-within", seconds(mem.Exhaustion), "reaching a limit within this long at the observed rate makes a leak")
}

// options turns the flags into the analysis' thresholds and memory limit.
// Errors name the flag and say what is allowed.
func (a *analysisFlags) options() (runner.AnalysisOptions, error) {
	var ao runner.AnalysisOptions
	if a.memLimit != "" {
		v, err := humanize.ParseBytes(a.memLimit)
		if err != nil {
			return ao, fmt.Errorf("--mem-limit %q: want a size such as 512MiB or 2GB", a.memLimit)
		}
		ao.MemLimit = v
	}
	growth, err := humanize.ParseBytes(a.leakGrowth)
	if err != nil {
		return ao, fmt.Errorf("--leak-min-growth %q: want a size such as 1MiB", a.leakGrowth)
	}
	hGrowth, err := humanize.ParseBytes(a.horizonGrowth)
	if err != nil || hGrowth == 0 {
		return ao, fmt.Errorf("--leak-horizon-growth %q: want a size > 0 such as 64MiB", a.horizonGrowth)
	}
	switch {
	case a.alpha <= 0 || a.alpha >= 0.5:
		return ao, fmt.Errorf("--alpha must be between 0 and 0.5, got %g", a.alpha)
	case a.leakBytes < 0 || a.leakFDs < 0:
		return ao, errors.New("--leak-bytes-per-request and --leak-fds-per-request must be >= 0")
	case a.horizon <= 0:
		return ao, fmt.Errorf("--leak-horizon must be > 0, e.g. 24h; got %s", a.horizon)
	case a.horizonFDs <= 0:
		return ao, fmt.Errorf("--leak-horizon-fds must be > 0, e.g. 1000; got %g", a.horizonFDs)
	case a.limitShare <= 0 || a.limitShare > 1:
		return ao, fmt.Errorf("--leak-limit-share must be > 0 and <= 1, e.g. 0.1; got %g", a.limitShare)
	case a.exhaustion <= 0:
		return ao, fmt.Errorf("--exhaustion-within must be > 0, e.g. 168h; got %s", a.exhaustion)
	}
	horizon := verdict.Thresholds{Horizon: a.horizon.Seconds(), HorizonLimitShare: a.limitShare, Exhaustion: a.exhaustion.Seconds()}
	ao.Memory, ao.FDs = horizon, horizon
	ao.Memory.Alpha, ao.Memory.MinPerRequest, ao.Memory.MinTotal = a.alpha, a.leakBytes, float64(growth)
	ao.Memory.HorizonGrowth = float64(hGrowth)
	ao.FDs.Alpha, ao.FDs.MinPerRequest, ao.FDs.MinTotal = a.alpha, a.leakFDs, verdict.FDThresholds.MinTotal
	ao.FDs.HorizonGrowth = a.horizonFDs
	return ao, nil
}
