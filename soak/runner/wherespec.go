package runner

import (
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/nodeinspect"
	"github.com/soakd/soakd/soak/sites"
	"github.com/soakd/soakd/soak/urlx"
)

// WhereSpec says where soakd looks for where the growth lives: the
// target's mappings, its allocation sites, and the evidence it keeps.
type WhereSpec struct {
	// Off reads no mappings and takes no snapshots.
	Off bool `yaml:"off"`
	// Pprof is a Go heap profile's URL; "" probes /debug/pprof/heap on the
	// load URL's port; "off" looks for none.
	Pprof string `yaml:"pprof"`
	// SnapshotCmd runs at the soak's start and end, {pid} replaced by the
	// target's PID; its output is kept with the run.
	SnapshotCmd string `yaml:"snapshot_cmd"`
	// NoJcmd keeps jcmd (a full GC each) off a JVM target.
	NoJcmd bool `yaml:"no_jcmd"`
	// EvidenceLimit bounds the snapshot files kept per run, e.g. 8MiB.
	EvidenceLimit string `yaml:"evidence_limit"`
	// NodeInspect is a Node target's inspector, HOST:PORT on loopback,
	// read for its live heap under the designed mix; "": none.
	NodeInspect string `yaml:"node_inspect"`
}

func (w *WhereSpec) check(es *field.Errors) {
	if w.Pprof != "" && w.Pprof != sites.Off {
		if _, err := urlx.Parse(w.Pprof, urlx.HTTP); err != nil {
			es.Add("where.pprof", "%q: want an http(s) URL of a heap profile, e.g. http://127.0.0.1:6060/debug/pprof/heap, or off", w.Pprof)
		}
	}
	if w.NodeInspect != "" {
		if err := nodeinspect.CheckAddr(w.NodeInspect); err != nil {
			es.Add("where.node_inspect", "%q: %v", w.NodeInspect, err)
		}
	}
	if w.SnapshotCmd != "" && !strings.Contains(w.SnapshotCmd, "{pid}") {
		es.Add("where.snapshot_cmd", "%q: must hold the target's PID placeholder {pid}, e.g. 'jmap -histo:live {pid}'", w.SnapshotCmd)
	}
	if w.EvidenceLimit != "" {
		if n, err := humanize.ParseBytes(w.EvidenceLimit); err != nil || n == 0 {
			es.Add("where.evidence_limit", "%q: want a size such as 8MiB", w.EvidenceLimit)
		}
	}
}

// options sets o's where fields.
func (w *WhereSpec) options(o *Options) {
	o.NoWhere = w.Off
	o.NodeInspect = w.NodeInspect
	o.Sites = sites.Options{Pprof: w.Pprof, SnapshotCmd: w.SnapshotCmd, NoJVM: w.NoJcmd}
	if n, err := humanize.ParseBytes(w.EvidenceLimit); err == nil {
		o.EvidenceLimit = int64(n)
	}
}
