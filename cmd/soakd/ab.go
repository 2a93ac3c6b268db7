package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/abrun"
	"github.com/soakd/soakd/soak/compare"
)

// abUsage heads `soakd ab --help`.
const abUsage = `Usage: soakd ab --a 'CMD_A' --b 'CMD_B' [flags] [URL_PATH...]
       soakd ab --a-url URL --b-url URL [--a-pid PID --b-pid PID] [flags] [URL_PATH...]

Compare two builds of a server on one machine: both run at once, the load
alternates between them in blocks (A B B A ...), so the machine's drift
falls on both alike. Each build's resource slopes are fitted on its own
requests; per-block pairs give the CPU-per-request, latency, throughput
and error-rate differences. A sequential test looks every few pairs and
stops as soon as the comparison is decided (a normal-mixture confidence
sequence: its false-alarm rate holds at every look), or at -n/-d.

A command holds {port} where its listening port goes: soakd picks a free
loopback port, starts the command, and loads http://127.0.0.1:PORT/PATH.
The URL paths default to /.

Exit code: 0 same or improved, 1 regressed, 4 inconclusive (undecided at
-n/-d), 2 a usage or runtime error, 3 a build died.

Flags:`

// abFlags are the flags of `soakd ab` that are not abrun.Options: the
// margins (as soakd compare's, by the same names) and the output.
type abFlags struct {
	cmp      compareFlags // the margins and --markdown/--junit, as soakd compare reads them
	json     bool
	quiet    bool
	logLevel string
}

// newABFlagSet declares the flags of `soakd ab` into o and f.
func newABFlagSet(o *abrun.Options, f *abFlags, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ab", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintln(stderr, abUsage)
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	fs.StringVar(&o.A.Exec, "a", "", "build A (the old one): a command to start, with {port}")
	fs.StringVar(&o.B.Exec, "b", "", "build B (the new one): a command to start, with {port}")
	fs.StringVar(&o.A.URL, "a-url", "", "build A's base URL, e.g. http://127.0.0.1:8080 (instead of --a, or with it for a command that listens there)")
	fs.StringVar(&o.B.URL, "b-url", "", "build B's base URL")
	fs.IntVar(&o.A.PID, "a-pid", 0, "with --a-url: build A's process (default: the one listening on its port)")
	fs.IntVar(&o.B.PID, "b-pid", 0, "with --b-url: build B's process")
	fs.StringVar(&o.A.ExecLog, "a-log", "", "with --a: write A's output to this file")
	fs.StringVar(&o.B.ExecLog, "b-log", "", "with --b: write B's output to this file")
	fs.Uint64VarP(&o.Requests, "requests", "n", 400000, "stop undecided after this many requests, both builds together (0: no limit)")
	fs.DurationVarP(&o.Duration, "duration", "d", abrun.DefaultDuration, "stop undecided after this long")
	fs.Uint64Var(&o.BlockRequests, "block", 1000, "requests per block")
	fs.IntVar(&o.WarmupPairs, "warmup-pairs", 1, "first pairs of blocks that only warm the builds up (-1: none)")
	fs.IntVar(&o.MinPairs, "min-pairs", 4, "pairs before the first look")
	fs.IntVar(&o.LookEvery, "look-every", 1, "pairs between looks (the test holds at every look)")
	fs.Float64Var(&o.Alpha, "alpha", abrun.DefaultAlpha, "two-sided error of each metric's confidence sequence, over all looks")
	declareMargins(fs, &f.cmp, compare.InterleavedMargins(), "A's")
	fs.StringVar(&f.cmp.markdown, "markdown", "", "also write the comparison as a Markdown table to this file (for a CI job's summary)")
	fs.StringVar(&f.cmp.junit, "junit", "", "also write the comparison as JUnit XML to this file: one test case per metric, failed when regressed")
	l := &o.Load
	fs.IntVarP(&l.Concurrency, "concurrency", "c", 4, "closed-loop workers, each with its own connection")
	fs.BoolVar(&l.KeepAlive, "keepalive", true, "reuse connections")
	fs.DurationVar(&l.Timeout, "timeout", 0, "per-request timeout (default 30s)")
	fs.StringVarP(&o.Method, "method", "m", "GET", "request method")
	fs.DurationVar(&o.Interval, "interval", 0, "sampling interval within a block (default 50ms)")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 0, "with --a/--b: how long to wait for the port (default 10s)")
	fs.BoolVar(&f.json, "json", false, "print the result as JSON")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no line per look on stderr")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	return fs
}

// parseAB parses the arguments of `soakd ab`.
func parseAB(args []string, stderr io.Writer) (abrun.Options, abFlags, error) {
	var o abrun.Options
	var f abFlags
	fs := newABFlagSet(&o, &f, stderr)
	if err := fs.Parse(args); err != nil {
		return o, f, err
	}
	for _, b := range []struct {
		name string
		t    abrun.Target
	}{{"a", o.A}, {"b", o.B}} {
		switch {
		case b.t.Exec == "" && b.t.URL == "":
			return o, f, fmt.Errorf("--%s: give build %s's command (with {port}) or --%s-url", b.name, strings.ToUpper(b.name), b.name)
		case b.t.Exec != "" && b.t.PID != 0:
			return o, f, fmt.Errorf("--%s-pid: not with --%s (soakd starts that process itself)", b.name, b.name)
		}
	}
	if o.Load.Concurrency < 1 {
		return o, f, fmt.Errorf("--concurrency: must be >= 1, got %d", o.Load.Concurrency)
	}
	if o.BlockRequests < 10 {
		return o, f, fmt.Errorf("--block: must be >= 10 requests, got %d", o.BlockRequests)
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, f, fmt.Errorf("--alpha: must be between 0 and 1, got %v", o.Alpha)
	}
	m, err := f.cmp.margins()
	if err != nil {
		return o, f, err
	}
	o.Margins, o.MarginNames = m, marginFlags
	o.Paths = fs.Args()
	for _, p := range o.Paths {
		if !strings.HasPrefix(p, "/") {
			return o, f, fmt.Errorf("URL path %q: must start with / (the builds' hosts come from --a/--b or --a-url/--b-url)", p)
		}
	}
	return o, f, nil
}

func cmdAB(args []string, stdout, stderr io.Writer) int {
	o, f, err := parseAB(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd ab:", err)
		return exitUsage
	}
	log, err := newCLILogger(f.logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "soakd ab:", err)
		return exitUsage
	}
	defer log.Sync()
	o.Log = log
	if !f.quiet {
		o.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := abrun.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "soakd ab:", err)
		return exitUsage
	}
	if err := writeAB(stdout, res, f); err != nil {
		fmt.Fprintln(stderr, "soakd ab:", err)
		return exitUsage
	}
	if res.Died != nil {
		fmt.Fprintln(stderr, "soakd ab:", res.Died)
	}
	fmt.Fprintf(stderr, "%s; after %d requests (%d pairs of %d-request blocks, stopped by %s)\n",
		strings.Replace(res.Line(), "soakd compare", "soakd ab", 1), res.Requests, res.Pairs, res.BlockRequests, res.StoppedBy)
	return abExit(res)
}

// abExit is the exit code of an A/B result: soakd compare's, or 3 when a
// build died.
func abExit(res *abrun.Result) int {
	if res.StoppedBy == "a_died" || res.StoppedBy == "b_died" {
		return exitTargetDied
	}
	return compareExit(res.Verdict)
}

// writeAB prints the result (text or JSON) and writes the files asked for.
func writeAB(w io.Writer, res *abrun.Result, f abFlags) error {
	var err error
	if f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = writeABText(w, res)
	}
	if err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{{"--markdown", f.cmp.markdown, res.WriteMarkdown}, {"--junit", f.cmp.junit, res.WriteJUnit}} {
		if out.path == "" {
			continue
		}
		if err := createWith(out.path, out.write); err != nil {
			return fmt.Errorf("%s %s: %w", out.flag, out.path, err)
		}
	}
	return nil
}

// writeABText writes what the run took, then the comparison's table.
func writeABText(w io.Writer, res *abrun.Result) error {
	fmt.Fprintf(w, "A/B: %d requests (A %d, B %d) in %d pairs of %d-request blocks, %d looks, %.0f s; stopped by %s\n",
		res.Requests, res.RequestsA, res.RequestsB, res.Pairs, res.BlockRequests, res.Looks, res.Seconds, res.StoppedBy)
	fmt.Fprintf(w, "Intervals: %s, alpha %.3g, over every look.\n", res.Method, res.Alpha)
	return res.WriteText(w)
}

// declareMargins declares the margin flags of soakd compare and soakd
// ab into f, with d's defaults (compare.DefaultMargins for two separate
// runs, compare.InterleavedMargins for ab); ref names what a relative
// margin is a share of ("the old run's", "A's").
func declareMargins(fs *pflag.FlagSet, f *compareFlags, d compare.Margins, ref string) {
	fs.Float64Var(&f.m.LeakBytes, "leak-margin", d.LeakBytes, "memory growth per request that matters, bytes (or --leak-margin-share of "+ref+" slope, if larger)")
	fs.Float64Var(&f.m.LeakCount, "leak-margin-count", d.LeakCount, "fds, threads or sockets per request that matter")
	fs.Float64Var(&f.sharePct, "leak-margin-share", 100*d.LeakShare, "the share of "+ref+" slope that matters, %")
	fs.Float64Var(&f.latencyPct, "latency-margin", 100*d.Latency, "latency p50 change that matters, % of "+ref)
	fs.Float64Var(&f.p99Pct, "latency-p99-margin", 100*d.LatencyP99, "latency p99 change that matters, % of "+ref)
	fs.Float64Var(&f.p999Pct, "latency-p999-margin", 100*d.LatencyP999, "latency p99.9 change that matters, % of "+ref)
	fs.Float64Var(&f.cpuPct, "cpu-margin", 100*d.CPU, "CPU per request change that matters, % of "+ref)
	fs.Float64Var(&f.m.ErrorPoints, "error-margin", d.ErrorPoints, "error rate change that matters, percentage points")
	fs.Float64Var(&f.tputPct, "throughput-margin", 100*d.Throughput, "throughput drop that matters, % of "+ref)
}
