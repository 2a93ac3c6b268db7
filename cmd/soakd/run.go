package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/soakd/soakd/soak"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/web"
)

// runFlags are the flags of `soakd run` that are not soak.Options fields
// as they stand.
type runFlags struct {
	method       string
	headers      []string
	body         string
	targets      string
	expectBody   string
	warmup       string
	baseline     time.Duration
	analysis     analysisFlags
	noSmaps      bool
	quiet        bool
	progress     bool
	json         bool
	logLevel     string
	expectStatus []string
}

// newRunFlagSet declares the flags of `soakd run` into o and f.
func newRunFlagSet(o *soak.Options, f *runFlags, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: soakd run [flags] URL\n\nSoak URL with HTTP load while sampling the server's process tree, then print\nthe verdict: leak, clean or inconclusive. Exit code 0: done, 1: a leak was\nfound, 2: a usage or runtime error.\n\nFlags:")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	l := &o.Load
	// Load.
	fs.IntVarP(&l.Concurrency, "concurrency", "c", 1, "closed-loop workers, each with its own connection (in open loop: the most requests in flight)")
	fs.Float64Var(&l.Rate, "rate", 0, "open loop: requests per second on a constant schedule; latency counts from each intended send time")
	fs.Uint64VarP(&l.Requests, "requests", "n", 0, "stop after this many requests (0: no limit)")
	fs.DurationVarP(&l.Duration, "duration", "d", 0, "stop after this long, e.g. 8h (0: no limit); with -n, whichever comes first")
	fs.BoolVar(&l.KeepAlive, "keepalive", true, "reuse connections; --keepalive=false opens one per request, as plain ab does")
	fs.StringVarP(&f.targets, "targets", "", "", "file of weighted endpoints, one '[weight] METHOD URL [@bodyfile]' per line (instead of URL)")
	fs.StringVarP(&f.method, "method", "m", "GET", "request method")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	fs.StringVar(&f.body, "body", "", "request body: a STRING, or @FILE to read it from a file")
	fs.StringVarP(&l.ContentType, "content-type", "T", "", "Content-Type of the body, e.g. application/x-www-form-urlencoded")
	fs.DurationVar(&l.Timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.BoolVar(&l.InsecureTLS, "insecure", false, "do not verify https certificates")
	// Checks.
	fs.StringSliceVar(&f.expectStatus, "expect-status", nil, "accepted statuses, e.g. 200,3xx (default: any 2xx or 3xx)")
	fs.StringVar(&f.expectBody, "expect-body", "", "a regular expression every response body must match")
	fs.BoolVar(&l.CheckLength, "check-length", false, "count a body whose length differs from the first response's as an error (ab's 'Failed requests (Length)')")
	// Target.
	t := &o.Target
	fs.IntVar(&t.PID, "pid", 0, "target: the process with this PID, and its descendants")
	fs.StringVar(&t.PIDFile, "pidfile", "", "target: the PID in this file, re-read on every sample")
	fs.StringVar(&t.Match, "match", "", "target: the one root process whose full command line matches this regexp")
	fs.StringVar(&t.Unit, "unit", "", "target: the processes of this systemd unit's cgroup, e.g. nginx.service")
	fs.StringVar(&t.Exec, "exec", "", "target: start this command, wait for URL's port, soak it, stop it")
	fs.StringVar(&t.ExecLog, "exec-log", "", "with --exec: write the target's stdout and stderr to this file")
	fs.BoolVar(&t.ExecShow, "exec-show", false, "with --exec: show the target's output on stderr")
	fs.DurationVar(&t.ReadyTimeout, "ready-timeout", 10*time.Second, "with --exec: how long to wait for the port to accept connections")
	fs.DurationVar(&t.StopGrace, "stop-grace", 5*time.Second, "with --exec: SIGKILL this long after SIGTERM")
	fs.BoolVar(&o.NoProbe, "no-probe", false, "load only: sample no target, make no resource verdicts")
	declareRemote(fs, &o.Remote)
	// Sampling and verdicts.
	fs.DurationVar(&o.Interval, "interval", 0, "sampling interval; 0 paces it to the run (about 300 soak samples, 10ms to 1s, within 2% of a core); progress lines stay at 1s")
	fs.DurationVar(&o.Sampler.SmapsInterval, "smaps-interval", 30*time.Second, "how often to read PSS/USS from smaps_rollup (it takes the target's mmap lock)")
	fs.BoolVar(&f.noSmaps, "no-smaps", false, "never read smaps_rollup (no PSS/USS)")
	fs.DurationVar(&f.baseline, "baseline", soak.DefaultBaseline, "before the load, sample the idle target this long: the level 'released' is judged against (0 skips it)")
	fs.StringVar(&f.warmup, "warmup", "10%", "excluded from the fits: N requests, a duration (30s), a share of the run (10%), or 0")
	fs.DurationVar(&o.Cooldown, "cooldown", 0, "after the load stops, sample this long to see whether memory is released")
	f.analysis.declare(fs)
	// Output.
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines")
	fs.BoolVar(&f.progress, "progress", false, "print progress lines even when stderr is not a terminal")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.StringVar(&o.OutDir, "out", "", "write samples.csv (as the run goes), report.json and report.txt into this directory")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	return fs
}

// parseRun parses the arguments of `soakd run` into soak options. Errors
// name the flag and say what is allowed.
func parseRun(args []string, stderr io.Writer) (soak.Options, runFlags, error) {
	var o soak.Options
	var f runFlags
	fs := newRunFlagSet(&o, &f, stderr)
	if err := fs.Parse(args); err != nil {
		return o, f, err
	}
	if err := f.apply(&o, fs.Args()); err != nil {
		return o, f, err
	}
	return o, f, nil
}

// apply turns the string-typed flags and the URL argument into options.
func (f *runFlags) apply(o *soak.Options, args []string) error {
	l := &o.Load
	switch {
	case f.targets != "" && len(args) > 0:
		return errors.New("give either a URL or --targets FILE, not both")
	case f.targets != "":
		eps, err := load.ParseTargetsFile(f.targets)
		if err != nil {
			return fmt.Errorf("--targets: %w", err)
		}
		l.Endpoints = eps
	case len(args) == 1:
		body, err := load.ParseBody(f.body)
		if err != nil {
			return fmt.Errorf("--body: %w", err)
		}
		l.Endpoints = []load.Endpoint{{Weight: 1, Method: strings.ToUpper(f.method), URL: args[0], Body: body}}
	case len(args) == 0:
		return errors.New("missing URL: soakd run [flags] URL (or --targets FILE)")
	default:
		return fmt.Errorf("one URL expected, got %d arguments: %s", len(args), strings.Join(args, " "))
	}
	o.Target.URL = l.Endpoints[0].URL
	for _, h := range f.headers {
		hd, err := load.ParseHeader(h)
		if err != nil {
			return fmt.Errorf("--header %q: %w", h, err)
		}
		l.Headers = append(l.Headers, hd)
	}
	l.ExpectStatus = f.expectStatus
	if f.expectBody != "" {
		re, err := regexp.Compile(f.expectBody)
		if err != nil {
			return fmt.Errorf("--expect-body: %w", err)
		}
		l.ExpectBody = re
	}
	if f.noSmaps {
		o.Sampler.SmapsInterval = -1
	}
	w, err := soak.ParseWarmup(f.warmup)
	if err != nil {
		return fmt.Errorf("--warmup %w", err)
	}
	o.Warmup = w
	switch {
	case f.baseline < 0:
		return fmt.Errorf("--baseline must be >= 0 (0 skips it), got %s", f.baseline)
	case f.baseline == 0:
		o.Baseline = -1
	default:
		o.Baseline = f.baseline
	}
	ao, err := f.analysis.options()
	if err != nil {
		return err
	}
	o.Memory, o.FDs, o.MemLimit = ao.Memory, ao.FDs, ao.MemLimit
	if err := o.Remote.Validate(); err != nil {
		return cliError(err)
	}
	return checkStop(l)
}

// checkStop names the flags a run needs to stop by itself.
func checkStop(l *load.Options) error {
	switch {
	case l.Requests == 0 && l.Duration <= 0:
		return errors.New("no stop condition: set -n/--requests N or -d/--duration D (e.g. -d 8h), or both, so the run stops by itself")
	case l.Rate < 0:
		return fmt.Errorf("--rate %g: want requests per second > 0, or 0 for the closed loop", l.Rate)
	}
	return nil
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
	return soakAndReport(o, f, stdout, stderr)
}

// soakAndReport runs the soak with signal handling and prints the report.
func soakAndReport(o soak.Options, f runFlags, stdout, stderr io.Writer) int {
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
	rep, err := soak.Run(ctx, o)
	if err != nil && rep == nil {
		fmt.Fprintln(stderr, "soakd:", cliError(err))
		return exitUsage
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd:", err)
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
	if rep.HasLeak() {
		return exitLeak
	}
	return exitOK
}
