package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/runner"
)

// cmdCheckConfig is `soakd check-config FILE`: the check that `soakd serve`
// runs at start-up and on SIGHUP. It prints "FILE: ok, N jobs" and each
// job's next run, or every error with its line; exit 0 or 2.
func cmdCheckConfig(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("check-config", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.BoolP("quiet", "q", false, "print only errors")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: soakd check-config [flags] FILE\n\nCheck a soakd serve config file: strict YAML, every field validated.\nExit code 0: valid, 2: invalid.\n\nFlags:")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "soakd check-config: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "soakd check-config: want one FILE, e.g. soakd check-config /etc/soakd/soakd.yaml")
		return exitUsage
	}
	path := fs.Arg(0)
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: ok, %d %s\n", path, len(cfg.Jobs), plural(len(cfg.Jobs), "job", "jobs"))
	for _, w := range configWarnings(path, cfg) {
		fmt.Fprintf(stderr, "%s: warning: %s\n", path, w)
	}
	if !*quiet {
		printNextRuns(stdout, cfg, time.Now())
	}
	return exitOK
}

// printNextRuns prints each job's schedule and next run in its timezone.
func printNextRuns(w io.Writer, cfg *config.Config, now time.Time) {
	for _, j := range cfg.Jobs {
		if j.Schedule == "" {
			fmt.Fprintf(w, "  %-20s %-16s runs only on request\n", j.Name, "no schedule")
			continue
		}
		s, err := j.CronSchedule()
		loc, lerr := j.Location()
		if err != nil || lerr != nil {
			continue // Load has checked both
		}
		fmt.Fprintf(w, "  %-20s %-16s next %s\n", j.Name, j.Schedule, s.Next(now).In(loc).Format("2006-01-02 15:04 MST"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// configWarnings are the valid settings of cfg (loaded from path) that
// likely do not do what their writer wants.
func configWarnings(path string, cfg *config.Config) []string {
	var out []string
	if !cfg.ListenIsLoopback() && !externalURLSet(path) {
		out = append(out, fmt.Sprintf("external_url is unset and listen %s is not loopback: links in alerts point at %s; "+
			"set external_url to the address your readers reach soakd at (e.g. its reverse proxy)", cfg.Listen, cfg.ExternalURL))
	}
	for _, j := range cfg.Jobs {
		if soak, why := soakLength(j); soak > 0 && soak < j.Thresholds.Transient {
			out = append(out, fmt.Sprintf("jobs[%s]: its soak lasts about %s (%s), shorter than thresholds.transient (%s): "+
				"a leak in a process younger than that reads inconclusive until it has doubled its size; "+
				"make load.duration longer, or lower thresholds.transient for a long-lived target",
				j.Name, soak.Round(time.Second), why, j.Thresholds.Transient))
		}
	}
	return out
}

// soakLength is how long a job's soak phase lasts, and how that follows
// from its settings; 0 when only a request count bounds the load.
func soakLength(j config.Job) (time.Duration, string) {
	d := j.Load.Duration
	if d <= 0 {
		return 0, ""
	}
	w, err := runner.ParseWarmup(j.Phases.Warmup)
	switch {
	case err != nil || w.None:
		return d, fmt.Sprintf("load.duration %s", d)
	case w.Fraction > 0:
		return time.Duration(float64(d) * (1 - w.Fraction)), fmt.Sprintf("load.duration %s less the %s warm-up", d, j.Phases.Warmup)
	case w.Duration > 0:
		return max(d-w.Duration, 0), fmt.Sprintf("load.duration %s less the %s warm-up", d, w.Duration)
	}
	return d, fmt.Sprintf("load.duration %s, its warm-up of %d requests included", d, w.Requests)
}

// externalURLSet says whether the config file at path sets external_url
// (Load fills in a default when it does not).
func externalURLSet(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return true // Load read it a moment ago: say nothing rather than guess
	}
	var top struct {
		ExternalURL string `yaml:"external_url"`
	}
	return yaml.Unmarshal(b, &top) != nil || top.ExternalURL != ""
}
