package main

import (
	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/runner"
)

// declareWhere declares the flags that say where soakd looks for where
// the growth lives.
func declareWhere(fs *pflag.FlagSet, w *runner.WhereSpec) {
	bound(fs, "where.pprof", fs.StringVar, &w.Pprof, "pprof", "a Go target's heap profile URL (net/http/pprof), diffed between the soak's start and end; default: /debug/pprof/heap on the URL's port if it answers; off: none")
	bound(fs, "where.snapshot_cmd", fs.StringVar, &w.SnapshotCmd, "snapshot-cmd", "run this shell command at the soak's start and end ({pid} is the target's PID) and keep its output with the report")
	bound(fs, "where.no_jcmd", fs.BoolVar, &w.NoJcmd, "no-jcmd", "take no class histograms of a JVM target (jcmd GC.class_histogram forces a full GC)")
	bound(fs, "where.node_inspect", fs.StringVar, &w.NodeInspect, "node-inspect", "a Node target's inspector HOST:PORT on loopback (node --inspect=127.0.0.1:PORT): with --targets, its live heap is read after a forced collection at each block's end and split between the endpoints; it grants code execution in the target (docs/run.md)")
	bound(fs, "where.off", fs.BoolVar, &w.Off, "no-where", "read no /proc/PID/smaps (smaps_rollup only) and take no snapshots: no mappings, sites or evidence")
	bound(fs, "where.evidence_limit", fs.StringVar, &w.EvidenceLimit, "evidence-limit", "most bytes of snapshot files (profiles, histograms, smaps summaries) kept per run; default 8MiB")
}
