package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/config"
)

// alertTestTimeout bounds the whole `soakd alert test`.
const alertTestTimeout = time.Minute

// cmdAlert is `soakd alert test --config FILE`: it sends a test alert
// through every sink of the config and prints each sink's result. Exit
// code 0: all delivered, 1: a sink failed, 2: a usage or config error.
func cmdAlert(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("alert", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", DefaultConfigPath, "the YAML config file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: soakd alert test [--config FILE]\n\nSend a test alert (alertname SoakdTest, severity info) through every sink of\nthe config's alerts section, and print each sink's result.\n\nFlags:")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err == nil && (fs.NArg() != 1 || fs.Arg(0) != "test") {
		err = errors.New("want: soakd alert test [--config FILE]")
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd alert:", err)
		return exitUsage
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, "soakd alert:", err)
		return exitUsage
	}
	return alertTest(cfg.Alerts, stdout, stderr)
}

func alertTest(c alerts.Config, stdout, stderr io.Writer) int {
	sinks, err := alerts.Build(c, alerts.BuildOptions{})
	if err != nil {
		fmt.Fprintln(stderr, "soakd alert:", err)
		return exitUsage
	}
	if len(sinks) == 0 {
		fmt.Fprintln(stderr, "soakd alert: the config has no alert sinks (alerts.sinks)")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), alertTestTimeout)
	defer cancel()
	code := exitOK
	a := alerts.TestAlert(time.Now())
	for _, sc := range c.Sinks {
		start := time.Now()
		_, err := sinks[sc.Name].Send(ctx, a)
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			fmt.Fprintf(stdout, "%-20s %-12s FAILED (%s): %v\n", sc.Name, sc.Type, took, err)
			code = exitLeak // 1: a delivery failed
			continue
		}
		fmt.Fprintf(stdout, "%-20s %-12s ok (%s)\n", sc.Name, sc.Type, took)
	}
	return code
}
