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

// exitAlertFailed is `soakd alert test`'s exit code when any sink failed
// to deliver the test alert.
const exitAlertFailed = 1

// cmdAlert is `soakd alert test --config FILE`: it sends a test alert
// through every sink of the config and prints each sink's result. Exit
// code 0: all delivered, 1 (exitAlertFailed): a sink failed, 2: a usage or
// config error.
func cmdAlert(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("alert", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", DefaultConfigPath, "the YAML config file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: soakd alert test [--config FILE]\n\nSend a test alert (alertname SoakdTest, severity info) through every sink of\nthe config's alerts section, and print each sink's result. An alertmanager sink\npasses only when every one of its URLs accepts the alert.\n\nExit status: 0 every sink delivered it; 1 a sink failed (each failed sink is\nnamed on stderr with its error); 2 a usage or config error.\n\nFlags:")
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
	a := alerts.TestAlert(time.Now())
	var failed []string
	for _, sc := range c.Sinks {
		start := time.Now()
		err := alerts.SendTest(ctx, sinks[sc.Name], a)
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			fmt.Fprintf(stdout, "%-20s %-12s FAILED (%s): %v\n", sc.Name, sc.Type, took, err)
			failed = append(failed, fmt.Sprintf("%s (%s): %v", sc.Name, sc.Type, err))
			continue
		}
		fmt.Fprintf(stdout, "%-20s %-12s ok (%s)\n", sc.Name, sc.Type, took)
	}
	if len(failed) == 0 {
		return exitOK
	}
	fmt.Fprintf(stderr, "soakd alert: %d of %d sinks failed to deliver the test alert; fix them before relying on alerts:\n", len(failed), len(c.Sinks))
	for _, f := range failed {
		fmt.Fprintf(stderr, "  %s\n", f)
	}
	return exitAlertFailed
}
