package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

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
(cpu, listen_queue, fd_limit, per_connection, contention, coherency,
client, none), fit memory and fds per connection, and suggest a 'soakd
run' below the knee.

The ladder stops early past the knee once throughput fell, when a level's
errors exceed --max-error-rate, when the target's fds reach their limit,
or when the next level needs more fds than soakd may open (soakd raises
its own RLIMIT_NOFILE to the hard limit first and says so).

Exit code: 0 done, 2 a usage or runtime error.

Flags:`

// sweepFlags are the flags of `soakd sweep` beyond the run's.
type sweepFlags struct {
	levels        []int
	levelDuration time.Duration
	levelRequests uint64
	levelWarmup   time.Duration
}

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
	sf := sweepFlags{levels: sweep.DefaultLevels, levelDuration: sweep.DefaultLevelDuration}
	fs.IntSliceVar(&sf.levels, "levels", sf.levels, "the ladder: closed-loop concurrencies, rising")
	fs.DurationVar(&sf.levelDuration, "level-duration", sf.levelDuration, "how long each level is measured, after its warm-up")
	fs.Uint64Var(&sf.levelRequests, "level-requests", 0, "measure each level for this many requests instead of --level-duration")
	fs.DurationVar(&sf.levelWarmup, "level-warmup", 0, "warm-up before each level's measure (default a tenth of the level, at most 3s; negative: none)")
	fs.Lookup("out").Usage = "write report.json, report.txt and report.html (the sweep's charts) into this directory"
	if err := fs.Parse(args); err != nil {
		return sweep.Options{}, f, err
	}
	for _, n := range notForSweep {
		if fs.Changed(n) {
			return sweep.Options{}, f, fmt.Errorf("--%s: not a sweep flag: the ladder sets it per level (use --levels, --level-duration, --level-requests, --level-warmup)", n)
		}
	}
	if err := checkLevels(sf); err != nil {
		return sweep.Options{}, f, err
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
	s.Load.Duration = sf.levelDuration // checked here, set per level
	ro, err := s.Options()
	if err != nil {
		return sweep.Options{}, f, specError(fs, err)
	}
	return sweep.Options{Run: ro, Levels: sf.levels, LevelDuration: sf.levelDuration,
		LevelRequests: sf.levelRequests, LevelWarmup: sf.levelWarmup}, f, nil
}

// checkLevels checks the ladder's flags.
func checkLevels(sf sweepFlags) error {
	if len(sf.levels) == 0 {
		return errors.New("--levels: give at least one concurrency, e.g. 1,2,5,10")
	}
	for i, n := range sf.levels {
		if n < 1 || i > 0 && n <= sf.levels[i-1] {
			return fmt.Errorf("--levels: want rising concurrencies >= 1, got %v", sf.levels)
		}
	}
	if sf.levelRequests == 0 && sf.levelDuration <= 0 {
		return fmt.Errorf("--level-duration: must be > 0, got %s (or set --level-requests)", sf.levelDuration)
	}
	return nil
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
