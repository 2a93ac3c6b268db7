package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/demo"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
)

// cmdDemo soaks the built-in demo target: soakd re-executed as a small
// server that leaks a fixed number of bytes per request and an fd every N
// requests. It shows the whole job on a target whose truth is known.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	leak := fs.Int("leak-bytes", 1024, "bytes the demo target leaks per request")
	fdEvery := fs.Int("leak-fd-every", 200, "the demo target leaks one fd every N requests (0: never)")
	rate := fs.Float64("rate", 1500, "requests per second (open loop)")
	dur := fs.DurationP("duration", "d", 20*time.Second, "how long to load the demo target")
	cool := fs.Duration("cooldown", 5*time.Second, "how long to watch after the load stops")
	interval := fs.Duration("interval", 0, "sampling interval (0: paced to the run)")
	baseline := fs.Duration("baseline", runner.DefaultBaseline, "sample the idle target this long before the load (0 skips it)")
	warmup := fs.String("warmup", runner.DefaultSpec().Phases.Warmup, "excluded from the fits: N requests, a duration (30s), a share of the run (10%), or 0")
	var f runFlags
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines")
	fs.BoolVar(&f.progress, "progress", false, "print progress lines even when stderr is not a terminal")
	out := fs.String("out", "", "write samples.csv, report.json and report.txt into this directory")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: soakd demo [flags]\n\nStarts a demo server that leaks on purpose, soaks it, and prints the report.\n\nFlags:")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	o, err := demoOptions(*leak, *fdEvery, *rate, *dur, *cool+max(*baseline, 0))
	if err != nil {
		fmt.Fprintln(stderr, "soakd demo:", err)
		return exitUsage
	}
	o.OutDir, o.Interval, o.Baseline, o.Cooldown = *out, *interval, *baseline, *cool
	if o.Warmup, err = runner.ParseWarmup(*warmup); err != nil {
		fmt.Fprintln(stderr, "soakd demo: --warmup", err)
		return exitUsage
	}
	if *baseline <= 0 {
		o.Baseline = -1
	}
	f.logLevel = "warn"
	fmt.Fprintf(stderr, "soakd demo: the target leaks %d B per request and one fd every %d requests; %s of idle baseline, soaking it at %.0f req/s for %s, then %s of cool-down.\n",
		*leak, *fdEvery, max(*baseline, 0), *rate, *dur, *cool)
	return soakAndReport(o, f, stdout, stderr)
}

// demoOptions soaks the demo target for dur; idle is the time it is
// sampled without load (the baseline and the cool-down).
func demoOptions(leak, fdEvery int, rate float64, dur, idle time.Duration) (runner.Options, error) {
	exe, err := os.Executable()
	if err != nil {
		return runner.Options{}, err
	}
	if strings.ContainsAny(exe, " \t'\"\\") {
		return runner.Options{}, fmt.Errorf("the soakd binary's path %q has spaces or quotes; the demo cannot re-execute it", exe)
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return runner.Options{}, err
	}
	url := "http://" + addr + "/"
	var o runner.Options
	o.Load = load.Options{
		Endpoints: []load.Endpoint{{Weight: 1, Method: "GET", URL: url}},
		Rate:      rate, Concurrency: 16, Duration: dur, KeepAlive: true, Timeout: 5 * time.Second,
	}
	o.Target.URL = url
	o.Target.Exec = strings.Join([]string{exe, "demo-target", "--listen", addr,
		"--leak-bytes", strconv.Itoa(leak), "--leak-fd-every", strconv.Itoa(fdEvery),
		"--max-lifetime", (dur + idle + time.Minute).String()}, " ")
	o.Target.ReadyTimeout = 10 * time.Second
	o.Target.StopGrace = 5 * time.Second
	o.Sampler.SmapsInterval = 2 * time.Second
	o.Sampler.SocketInterval = 2 * time.Second
	return o, nil
}

// freeLoopbackAddr returns a loopback address with a port that was free a
// moment ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// cmdDemoTarget is the demo target itself, run by `soakd demo`.
func cmdDemoTarget(args []string, stdout, stderr io.Writer) int {
	return demo.Main(args, []string{"demo-target"})
}
