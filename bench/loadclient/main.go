// Command loadclient is a small benchmark driver for the soak/load engine,
// used by bench/load.sh with SOAKD=engine to measure the engine alone,
// without the sampler and the analysis of `soakd run`. It prints the text
// summary, then a last line "requests N".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/soakd/soakd/soak/load"
)

func main() { os.Exit(run()) }

func run() int {
	c := flag.Int("c", 1, "concurrency")
	d := flag.Duration("d", 8*time.Second, "duration")
	n := flag.Uint64("n", 0, "requests (0 = no limit)")
	rate := flag.Float64("rate", 0, "open-loop rate, req/s (0 = closed loop)")
	ka := flag.Bool("keepalive", true, "reuse connections")
	q := flag.Bool("q", false, "quiet: no progress lines")
	insecure := flag.Bool("insecure", false, "skip TLS verification")
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "run" { // same shape as `soakd run`
		args = args[1:]
	}
	_ = flag.CommandLine.Parse(args)
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: loadclient [run] [-c N] [-d 8s] [-n N] [--keepalive=false] URL")
		return 2
	}
	opts := load.Options{
		Endpoints:   []load.Endpoint{{URL: flag.Arg(0)}},
		Concurrency: *c, Duration: *d, Requests: *n, Rate: *rate,
		KeepAlive: *ka, InsecureTLS: *insecure,
	}
	if !*q {
		opts.OnInterval = load.NewProgress(os.Stderr, *n)
	}
	e, err := load.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := e.Run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := s.WriteText(os.Stdout); err != nil {
		return 1
	}
	fmt.Printf("requests %d\n", s.Requests)
	return 0
}
