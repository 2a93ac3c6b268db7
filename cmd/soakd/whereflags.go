package main

import (
	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/runner"
)

// declareWhere declares the flags that say where soakd looks for where
// the growth lives.
func declareWhere(fs *pflag.FlagSet, w *runner.WhereSpec) {
	fs.StringVar(&w.Pprof, "pprof", w.Pprof, "a Go target's heap profile URL (net/http/pprof), diffed between the soak's start and end; default: /debug/pprof/heap on the URL's port if it answers; off: none")
	bind(fs, "where.pprof", "pprof")
	fs.StringVar(&w.SnapshotCmd, "snapshot-cmd", w.SnapshotCmd, "run this shell command at the soak's start and end ({pid} is the target's PID) and keep its output with the report")
	bind(fs, "where.snapshot_cmd", "snapshot-cmd")
	fs.BoolVar(&w.NoJcmd, "no-jcmd", w.NoJcmd, "take no class histograms of a JVM target (jcmd GC.class_histogram forces a full GC)")
	bind(fs, "where.no_jcmd", "no-jcmd")
	fs.BoolVar(&w.Off, "no-where", w.Off, "read no /proc/PID/smaps (smaps_rollup only) and take no snapshots: no mappings, sites or evidence")
	bind(fs, "where.off", "no-where")
	fs.StringVar(&w.EvidenceLimit, "evidence-limit", w.EvidenceLimit, "most bytes of snapshot files (profiles, histograms, smaps summaries) kept per run; default 8MiB")
	bind(fs, "where.evidence_limit", "evidence-limit")
}
