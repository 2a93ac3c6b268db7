package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/sweep"
	"github.com/soakd/soakd/soak/web"
)

// sweepUsage heads `soakd sweep --help`.
const sweepUsage = `Usage: soakd sweep [flags] URL

Run a ladder of closed-loop concurrencies against URL, each level a short
soak of the target (same target flags, sampling and load engine as 'soakd
run'), and print one line per level: throughput, latency, errors, the CPU
verdict, the kernel's listen-queue counters, the target's RSS and fds.
Then fit the Universal Scalability Law, find the knee and name its cause
(cpu, serial, listen_queue, fd_limit, per_connection, contention,
coherency, client, none), fit memory and fds per connection, and suggest
a 'soakd run' at the knee's level under the throughput measured there.

The ladder stops early past a confirmed knee (two levels past it that did
not scale from it) once throughput fell (--past-knee climbs on), when a level's
errors exceed --max-error-rate, when the target's fds reach their limit,
or when the next level needs more fds than soakd may open (soakd raises
its own RLIMIT_NOFILE to the hard limit first and says so).

Exit code: 0 done, 2 a usage or runtime error.

Flags:`

// notForSweep are run flags that the ladder sets per level.
var notForSweep = []string{"concurrency", "rate", "requests", "duration", "warmup", "baseline", "cooldown"}

// parseSweep parses the arguments of `soakd sweep`.
func parseSweep(args []string, stderr io.Writer) (sweep.Options, runFlags, error) {
	s := runner.DefaultSpec()
	var f runFlags
	fs := newRunFlagSet(&s, &f, stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, sweepUsage)
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	for _, n := range notForSweep {
		fs.Lookup(n).Hidden = true
	}
	sp := sweep.DefaultSpec()
	bound(fs, "sweep.levels", fs.IntSliceVar, &sp.Levels, "levels", "the ladder: closed-loop concurrencies, rising")
	bound(fs, "sweep.level_duration", fs.DurationVar, &sp.LevelDuration, "level-duration", "how long each level is measured, after its warm-up")
	bound(fs, "sweep.level_requests", fs.Uint64Var, &sp.LevelRequests, "level-requests", "measure each level for this many requests instead of --level-duration")
	bound(fs, "sweep.level_warmup", fs.DurationVar, &sp.LevelWarmup, "level-warmup", "warm-up before each level's measure (default a tenth of the level, 300ms to 3s; negative: none)")
	bound(fs, "sweep.past_knee", fs.BoolVar, &sp.PastKnee, "past-knee", "climb the whole ladder: do not stop past a confirmed knee once throughput fell")
	fs.Lookup("out").Usage = "write report.json, report.txt and report.html (the sweep's charts) into this directory"
	if err := fs.Parse(args); err != nil {
		return sweep.Options{}, f, err
	}
	for _, n := range notForSweep {
		if fs.Changed(n) {
			return sweep.Options{}, f, fmt.Errorf("--%s: not a sweep flag: the ladder sets it per level (use --levels, --level-duration, --level-requests, --level-warmup)", n)
		}
	}
	switch rest := fs.Args(); {
	case len(rest) == 1 && s.Load.TargetsFile == "":
		s.Load.URL = rest[0]
	case len(rest) == 0 && s.Load.TargetsFile != "":
	default:
		return sweep.Options{}, f, errors.New("one URL expected: soakd sweep [flags] URL (or --targets FILE)")
	}
	if f.noSmaps {
		s.Sampling.Smaps = false
	}
	o, err := sp.Options(s)
	if err != nil {
		return o, f, specError(fs, err)
	}
	return o, f, nil
}

func cmdSweep(args []string, stdout, stderr io.Writer) int {
	o, f, err := parseSweep(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd sweep:", err)
		return exitUsage
	}
	log, err := newCLILogger(f.logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "soakd:", err)
		return exitUsage
	}
	defer log.Sync()
	o.Run.Log = log
	if !f.quiet && (f.progress || isTerminal(stderr)) {
		o.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := sweep.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "soakd sweep:", specError(nil, err))
		return exitUsage
	}
	if f.out != "" {
		if err := writeSweepFiles(f.out, rep); err != nil {
			fmt.Fprintln(stderr, "soakd sweep: --out:", err)
			return exitUsage
		}
	}
	if f.json {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd sweep: writing the report:", err)
		return exitUsage
	}
	return exitOK
}

// writeSweepFiles writes report.json, report.txt and report.html into dir.
func writeSweepFiles(dir string, rep *sweep.Report) error {
	if err := rep.WriteFiles(dir); err != nil {
		return err
	}
	return web.WriteSweepFile(dir, rep)
}
