package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/web"
)

// runFlags are the flags of `soakd run` that are not fields of the run's
// spec: the output.
type runFlags struct {
	noSmaps  bool
	quiet    bool
	progress bool
	json     bool
	logLevel string
	out      string
	// daemon, with tokenFile: ask the soakd serve at this URL to run the
	// job named by the argument (rundaemon.go).
	daemon    string
	tokenFile string
	job       string
}

// specPath is the flag annotation that names the runner.Spec field a flag
// sets, so that a spec's error is worded as the flag the user typed.
const specPath = "spec-path"

// bind records that the flag name sets the spec field at path.
func bind(fs *pflag.FlagSet, path, name string) {
	if err := fs.SetAnnotation(name, specPath, []string{path}); err != nil {
		panic(err) // a flag declared under another name: a bug
	}
}

// bound declares a flag with declare (fs.IntVar, fs.StringArrayVar, ...)
// into p, with p's value as its default, and binds it to the spec field
// at path: a flag is declared and bound in one place.
func bound[T any](fs *pflag.FlagSet, path string, declare func(p *T, name string, value T, usage string), p *T, name, usage string) {
	declare(p, name, *p, usage)
	bind(fs, path, name)
}

// boundP is bound for a flag with a one-letter shorthand (fs.IntVarP, ...).
func boundP[T any](fs *pflag.FlagSet, path string, declare func(p *T, name, shorthand string, value T, usage string), p *T, name, short, usage string) {
	declare(p, name, short, *p, usage)
	bind(fs, path, name)
}

// flagOf words a spec field's path as the flag that sets it: "--rate",
// "the URL"; "" when no flag sets it.
func flagOf(fs *pflag.FlagSet, path string) string {
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	if path == "load.url" {
		return "the URL"
	}
	name := ""
	fs.VisitAll(func(f *pflag.Flag) {
		if a := f.Annotations[specPath]; len(a) == 1 && a[0] == path && name == "" {
			name = "--" + f.Name
		}
	})
	return name
}

// specError words a spec's errors in flags, one per line: "--rate: must
// be >= 0 (0 = closed loop), got -5".
func specError(fs *pflag.FlagSet, err error) error {
	if fs == nil {
		s := runner.DefaultSpec()
		fs = newRunFlagSet(&s, &runFlags{}, io.Discard)
	}
	es := field.As(err)
	if es == nil {
		return err
	}
	lines := make([]string, len(es))
	for i, e := range es {
		msg := e.Text(func(p string) string { return flagOf(fs, p) })
		if f := flagOf(fs, e.Path); f != "" && f != "the URL" {
			msg = f + ": " + msg
		} else if f == "the URL" {
			msg = "URL: " + msg
		}
		lines[i] = msg
	}
	return errors.New(strings.Join(lines, "\n"))
}

// runUsage heads `soakd run --help`.
const runUsage = `Usage: soakd run [flags] URL
       soakd run --daemon DAEMON_URL [--token-file FILE] JOB

Soak URL with HTTP load while sampling the server's process tree, then print
the verdict: failing, leak, clean or inconclusive. A run is failing when its
requests fail: more than --max-error-rate of them, more than
--max-window-error-rate in any --error-window, or an error rate that rises
over the load.

Exit code: 0 done (clean or inconclusive), 1 a leak was found, 2 a usage or
runtime error, 3 the target died during the load (and was not back within
--dead-grace), 5 the requests are failing. When several hold, the first of
3, 5, 1 wins.

Flags:`

// newRunFlagSet declares the flags of `soakd run` into s and f. Each
// flag's default is s's value: the caller fills s from runner.DefaultSpec,
// the one place the defaults are written.
func newRunFlagSet(s *runner.Spec, f *runFlags, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintln(stderr, runUsage)
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	l := &s.Load
	// Load.
	boundP(fs, "load.concurrency", fs.IntVarP, &l.Concurrency, "concurrency", "c", "closed-loop workers, each with its own connection (default 1); in open loop the most requests in flight (default rate × timeout, at most 256)")
	bound(fs, "load.rate", fs.Float64Var, &l.Rate, "rate", "open loop: requests per second on a constant schedule; latency counts from each intended send time")
	boundP(fs, "load.requests", fs.Uint64VarP, &l.Requests, "requests", "n", "stop after this many requests (0: no limit)")
	boundP(fs, "load.duration", fs.DurationVarP, &l.Duration, "duration", "d", "stop after this long, e.g. 8h (0: no limit); with -n, whichever comes first")
	bound(fs, "until_decided", fs.BoolVar, &s.UntilDecided, "until-decided", "stop as soon as every resource, the requests and the CPU verdict are decided (looks from 30s of soak, each 1.25x the last, at a stricter level; none decides before 5m, three in a row stop it); -d/-n are then the most the run may take")
	bound(fs, "load.keepalive", fs.BoolVar, &l.KeepAlive, "keepalive", "reuse connections; --keepalive=false opens one per request, as plain ab does")
	bound(fs, "load.targets_file", fs.StringVar, &l.TargetsFile, "targets", "file of weighted endpoints, one '[weight] METHOD URL [@bodyfile]' per line (instead of URL)")
	bound(fs, "load.attribute", fs.StringVar, &l.Attribute, "attribute", "with --targets of two or more endpoints: on varies the mix in blocks so the report splits each resource's growth between the endpoints; off keeps the file's mix")
	boundP(fs, "load.method", fs.StringVarP, &l.Method, "method", "m", "request method")
	boundP(fs, "load.headers", fs.StringArrayVarP, &l.Headers, "header", "H", "request header 'Name: value' (repeatable)")
	bound(fs, "load.body", fs.StringVar, &l.Body, "body", "request body: a STRING, or @FILE to read it from a file")
	boundP(fs, "load.content_type", fs.StringVarP, &l.ContentType, "content-type", "T", "Content-Type of the body, e.g. application/x-www-form-urlencoded")
	bound(fs, "load.timeout", fs.DurationVar, &l.Timeout, "timeout", "per-request timeout")
	bound(fs, "load.insecure", fs.BoolVar, &l.Insecure, "insecure", "do not verify https certificates")
	// Checks.
	bound(fs, "load.expect_status", fs.StringSliceVar, &l.ExpectStatus, "expect-status", "accepted statuses, e.g. 200,3xx (default: any 2xx or 3xx)")
	bound(fs, "load.expect_body", fs.StringVar, &l.ExpectBody, "expect-body", "a regular expression every response body must match")
	bound(fs, "load.check_length", fs.BoolVar, &l.CheckLength, "check-length", "count a body whose length differs from the first response's as an error (ab's 'Failed requests (Length)')")
	// Target.
	t := &s.Target
	declareKinds(fs, &t.Spec)
	bound(fs, "target.exec_log", fs.StringVar, &t.ExecLog, "exec-log", "with --exec: write the target's stdout and stderr to this file")
	bound(fs, "target.exec_show", fs.BoolVar, &t.ExecShow, "exec-show", "with --exec: show the target's output on stderr")
	bound(fs, "target.ready_timeout", fs.DurationVar, &t.ReadyTimeout, "ready-timeout", "with --exec: how long to wait for the port to accept connections")
	bound(fs, "target.stop_grace", fs.DurationVar, &t.StopGrace, "stop-grace", "with --exec: SIGKILL this long after SIGTERM")
	bound(fs, "target.no_probe", fs.BoolVar, &t.NoProbe, "no-probe", "load only: sample no target, make no resource verdicts")
	bound(fs, "target.follow_upstreams", fs.BoolVar, &t.FollowUpstreams, "follow-upstreams", "sample with the tree the local servers it forwards to (a reverse proxy's backends), when first seen before the soak; without it they are named only")
	declareRemote(fs, &t.Remote)
	// Sampling and verdicts.
	sm := &s.Sampling
	bound(fs, "sampling.interval", fs.DurationVar, &sm.Interval, "interval", "sampling interval; 0 paces it to the run (about 300 soak samples, 10ms to 1s, within 2% of a core); progress lines stay at 1s")
	bound(fs, "sampling.smaps_interval", fs.DurationVar, &sm.SmapsInterval, "smaps-interval", "how often to read PSS/USS from smaps_rollup (it takes the target's mmap lock); default: about 30 reads over -d, 2s to 30s")
	bound(fs, "sampling.smaps", fs.BoolVar, &sm.Smaps, "smaps", "read PSS/USS from smaps_rollup; --smaps=false never reads it")
	fs.Lookup("smaps").Hidden = true
	fs.BoolVar(&f.noSmaps, "no-smaps", false, "never read smaps_rollup (no PSS/USS); the same as --smaps=false")
	ph := &s.Phases
	bound(fs, "phases.baseline", fs.DurationVar, &ph.Baseline, "baseline", "before the load, sample the idle target this long: the level 'released' is judged against (0 skips it)")
	bound(fs, "phases.warmup", fs.StringVar, &ph.Warmup, "warmup", "excluded from the fits: N requests, a duration (30s), a share of the run (10%), or 0")
	bound(fs, "phases.cooldown", fs.DurationVar, &ph.Cooldown, "cooldown", "after the load stops, sample this long to see whether memory is released")
	bound(fs, "target.dead_grace", fs.DurationVar, &s.Target.DeadGrace, "dead-grace", "when the target is gone this long during the load (not restarted), stop the load and exit 3; default 10s, negative never stops")
	declareThresholds(fs, &s.Thresholds)
	declareWhere(fs, &s.Where)
	// Output.
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines")
	fs.BoolVar(&f.progress, "progress", false, "print progress lines even when stderr is not a terminal")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.StringVar(&f.out, "out", "", "write samples.csv and procs.csv (as the run goes), then report.json, report.txt and report.html into this directory")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	// A daemon's job.
	fs.StringVar(&f.daemon, "daemon", "", "ask the soakd serve at this URL (e.g. http://127.0.0.1:7797) to run the job named instead of URL: soakd run --daemon URL JOB")
	fs.StringVar(&f.tokenFile, "token-file", "", "with --daemon: the file holding the daemon's API token")
	return fs
}

// declareKinds declares a flag per target kind in probes' table: --pid,
// --pidfile, ...
func declareKinds(fs *pflag.FlagSet, s *probes.Spec) {
	for _, k := range probes.Kinds() {
		if k.Field == nil {
			continue // the default, the port's owner
		}
		switch p := k.Field(s).(type) {
		case *int:
			bound(fs, "target."+k.Name, fs.IntVar, p, k.Name, "target: "+k.Usage)
		case *string:
			bound(fs, "target."+k.Name, fs.StringVar, p, k.Name, "target: "+k.Usage)
		}
	}
}

// parseRun parses the arguments of `soakd run` into a run's options.
// Errors name the flag and say what is allowed.
func parseRun(args []string, stderr io.Writer) (runner.Options, runFlags, error) {
	s := runner.DefaultSpec()
	var f runFlags
	fs := newRunFlagSet(&s, &f, stderr)
	if err := fs.Parse(args); err != nil {
		return runner.Options{}, f, err
	}
	if f.daemon != "" {
		return runner.Options{}, f, daemonArgs(fs, &f)
	}
	if fs.Changed("token-file") {
		return runner.Options{}, f, errors.New("--token-file: only with --daemon")
	}
	if fs.Changed("concurrency") && s.Load.Concurrency < 1 {
		return runner.Options{}, f, fmt.Errorf("--concurrency: must be >= 1, got %d (leave it out for the default)", s.Load.Concurrency)
	}
	switch rest := fs.Args(); {
	case s.Load.TargetsFile != "" && len(rest) > 0:
		return runner.Options{}, f, errors.New("give either a URL or --targets FILE, not both")
	case len(rest) == 1:
		s.Load.URL = rest[0]
	case len(rest) == 0 && s.Load.TargetsFile == "":
		return runner.Options{}, f, errors.New("missing URL: soakd run [flags] URL (or --targets FILE)")
	case len(rest) > 1:
		return runner.Options{}, f, fmt.Errorf("one URL expected, got %d arguments: %s", len(rest), strings.Join(rest, " "))
	}
	if f.noSmaps {
		s.Sampling.Smaps = false
	}
	o, err := s.Options()
	if err != nil {
		return o, f, specError(fs, err)
	}
	o.OutDir = f.out
	return o, f, nil
}

// newCLILogger logs to stderr: console lines on a terminal, JSON otherwise.
func newCLILogger(level string, stderr io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	enc := zapcore.NewJSONEncoder(encCfg)
	if isTerminal(stderr) {
		encCfg = zap.NewDevelopmentEncoderConfig()
		encCfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05")
		enc = zapcore.NewConsoleEncoder(encCfg)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(stderr), lvl)), nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	o, f, err := parseRun(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd run:", err)
		return exitUsage
	}
	if f.daemon != "" {
		return runOnDaemon(f, stdout, stderr)
	}
	return soakAndReport(o, f, stdout, stderr)
}

// soakAndReport runs the soak with signal handling and prints the report.
func soakAndReport(o runner.Options, f runFlags, stdout, stderr io.Writer) int {
	log, err := newCLILogger(f.logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "soakd:", err)
		return exitUsage
	}
	defer log.Sync()
	o.Log = log
	if !f.quiet && (f.progress || isTerminal(stderr)) {
		o.Progress = stderr
	}
	if o.OutDir != "" {
		if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
			fmt.Fprintln(stderr, "soakd: --out:", err)
			return exitUsage
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := runner.Run(ctx, o)
	if err != nil {
		// A setting the run could not use (a --pid that is gone, a
		// --match that matches nothing) is worded as its flag.
		fmt.Fprintln(stderr, "soakd:", specError(nil, err))
	}
	if rep == nil {
		return exitUsage
	}
	if o.OutDir != "" {
		if err := web.WriteReportFile(o.OutDir, rep, web.PageOptions{}); err != nil {
			fmt.Fprintln(stderr, "soakd: --out:", err)
		}
	}
	if f.json {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd: writing the report:", err)
		return exitUsage
	}
	return reportExit(rep)
}

// reportExit is a report's exit code: the target's death first, then
// failing requests, then a leak.
func reportExit(rep *model.Report) int {
	switch {
	case rep.TargetDied():
		return exitTargetDied
	case rep.Failing():
		return exitFailing
	case rep.HasLeak():
		return exitLeak
	}
	return exitOK
}
