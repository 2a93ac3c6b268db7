// Command soakd soak-tests network servers and finds resource leaks: it
// drives long, low-concurrency HTTP load, samples the target's whole process
// tree, fits growth per request, and says whether the target leaks, and
// whether it is CPU-bound or waits on I/O.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit codes.
const (
	exitOK    = 0
	exitLeak  = 1
	exitUsage = 2
	// exitTargetDied: the target died during the load and was not back
	// within --dead-grace; the load was stopped.
	exitTargetDied = 3
	// exitFailing: the target's requests failed (verdict "failing"):
	// more than --max-error-rate of them, a window above
	// --max-window-error-rate, or a rising error rate.
	exitFailing = 5
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// command is one subcommand: its entry point and a line of help.
type command struct {
	run    func(args []string, stdout, stderr io.Writer) int
	help   string
	hidden bool
}

func commands() map[string]command {
	return map[string]command{
		"run":          {run: cmdRun, help: "soak a server: load, sample, verdict"},
		"analyze":      {run: cmdAnalyze, help: "re-analyse a run's samples.csv with other thresholds"},
		"ab":           {run: cmdAB, help: "compare two builds: interleaved load, stops when decided"},
		"sweep":        {run: cmdSweep, help: "find the concurrency knee: a ladder of loads, the knee and its cause"},
		"demo":         {run: cmdDemo, help: "soak the built-in leaky demo target and print the report"},
		"demo-target":  {run: cmdDemoTarget, hidden: true},
		"serve":        {run: cmdServe, help: "run the daemon: scheduled soaks, API, web page, /metrics, alerts"},
		"check-config": {run: cmdCheckConfig, help: "check a daemon config file and exit"},
		"export":       {run: cmdExport, help: "write a stored run's samples (CSV) or report (JSON)"},
		"compare":      {run: cmdCompare, help: "judge whether a new run is worse than an old one (exit 1: regressed)"},
		"alert":        {run: cmdAlert, help: "'alert test --config FILE' sends a test alert through every sink"},
		"version":      {run: cmdVersion, help: "print the version"},
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout) // asked for: it is the output, and pipes to less
		return exitOK
	}
	c, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "soakd: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		// The command's usage is what was asked for: to stdout.
		stderr = stdout
	}
	return c.run(args[1:], stdout, stderr)
}

// wantsHelp tells whether args ask for help (-h or --help before any
// "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: soakd COMMAND [flags]\n\nCommands:")
	for _, name := range []string{"run", "sweep", "analyze", "compare", "ab", "demo", "serve", "check-config", "export", "alert", "version"} {
		fmt.Fprintf(w, "  %-12s %s\n", name, commands()[name].help)
	}
	fmt.Fprintln(w, "\nRun 'soakd COMMAND --help' for a command's flags.")
}

// version is the module version when built with `go install`, else "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "soakd", version())
	return exitOK
}
