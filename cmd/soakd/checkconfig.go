package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/config"
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
	if !*quiet {
		printNextRuns(stdout, cfg, time.Now())
	}
	return exitOK
}

// printNextRuns prints each job's schedule and next run in its timezone.
func printNextRuns(w io.Writer, cfg *config.Config, now time.Time) {
	for _, j := range cfg.Jobs {
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
