package model

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// Where is the report's account of where the growth lives beyond the
// per-resource fields (verdict.Resource's Mappings and Sites): what was
// looked at and how, and the snapshot files kept as evidence.
type Where struct {
	// Notes says, a sentence each, which snapshots were taken, which
	// failed, and what would let soakd look inside a runtime it cannot.
	Notes []string `json:"notes,omitempty"`
	// MapsReads is how many times the tree's /proc/PID/smaps were read,
	// and MapsCostSeconds the mean wall time of one read.
	MapsReads       int     `json:"maps_reads,omitempty"`
	MapsCostSeconds float64 `json:"maps_cost_seconds,omitempty"`
	// Evidence lists the snapshot files kept with the run (--out DIR's
	// evidence/, the daemon's store), within EvidenceLimit bytes;
	// EvidenceCut says what was cut to stay within it.
	Evidence      []EvidenceFile `json:"evidence,omitempty"`
	EvidenceLimit int64          `json:"evidence_limit_bytes,omitempty"`
	EvidenceCut   string         `json:"evidence_cut,omitempty"`
}

// EvidenceFile is one stored snapshot.
type EvidenceFile struct {
	Name string `json:"name"`
	// Kind says what it holds: "go-heap" (a pprof profile), "jvm-histogram",
	// "smaps" (JSON lines of the grouped mappings), "snapshot-cmd".
	Kind  string `json:"kind"`
	Bytes int64  `json:"bytes"`
	// CutFromBytes is set when the file was cut (or dropped, Bytes 0) to
	// keep the run's evidence within its limit: the size it had.
	CutFromBytes int64  `json:"cut_from_bytes,omitempty"`
	Data         []byte `json:"-"`
}

// EvidenceDir is the directory under --out DIR that holds the evidence.
const EvidenceDir = "evidence"

// MappingsLine says where a resource's growth lives, by mapping class:
// "92 % in [heap] (+88 MiB), 8 % in anonymous mappings (new: 3 × 8 MiB,
// glibc arenas)"; "" when there is none.
func MappingsLine(ms []verdict.Mapping) string {
	var parts []string
	for _, m := range ms {
		name := m.Name
		if name == "anonymous" {
			name = "anonymous mappings"
		}
		s := fmt.Sprintf("%.0f %% in %s (+%s", 100*m.Share, name, units.Amount(m.GrowthBytes, "bytes"))
		if n := m.New; n != nil && n.Count > 0 {
			s += ", new: " + newMappings(n)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}

// newMappings spells new mappings by size: "3 × 8 MiB, glibc arenas".
func newMappings(n *verdict.NewMappings) string {
	var sizes []string
	for i, sc := range n.Sizes {
		if i == 3 {
			sizes = append(sizes, "…")
			break
		}
		sizes = append(sizes, fmt.Sprintf("%d × %s", sc.Count, units.Amount(sc.SizeBytes, "bytes")))
	}
	s := strings.Join(sizes, " + ")
	switch {
	case n.Arenas == n.Count:
		s += ", glibc arenas"
	case n.Arenas > 0:
		s += fmt.Sprintf(", %d glibc arenas", n.Arenas)
	}
	return s
}

// SiteLine spells one site: "main.leak (main.go:42): 1.02 KiB/request,
// 1 object/request (98 %)".
func SiteLine(s verdict.Site) string {
	name := s.Site
	out := fmt.Sprintf("%s: %s/request", name, units.Amount(s.PerRequest, "bytes"))
	if s.PerRequest == 0 {
		out = fmt.Sprintf("%s: +%s", name, units.Amount(s.GrowthBytes, "bytes"))
	}
	if s.ObjectsPerRequest > 0 {
		out += ", " + units.Sig3(s.ObjectsPerRequest) + " objects/request"
	}
	return out + fmt.Sprintf(" (%.0f %%)", 100*s.Share)
}

// siteEndpoints is a site's split between the endpoints, for its line
// of the text: "; by endpoint: GET / 540 B/request (CI 520 – 560 B), …".
func siteEndpoints(s verdict.Site) string {
	if len(s.Endpoints) == 0 {
		return ""
	}
	parts := make([]string, len(s.Endpoints))
	for i, e := range s.Endpoints {
		parts[i] = fmt.Sprintf("%s %s/request (CI %s)", e.Endpoint, units.Amount(e.PerRequest, "bytes"), units.Range(e.CI95[0], e.CI95[1], "bytes"))
	}
	return "; by endpoint: " + strings.Join(parts, ", ")
}

// TopFinding is the one line that says where a leaking report's memory
// grows: the top site, else the mappings; "" when neither is known. The
// leak alert's description starts with it.
func (r *Report) TopFinding() string {
	res, ok := r.Resources["rss"]
	if !ok {
		return ""
	}
	switch {
	case len(res.Sites) > 0:
		return "rss grows at " + SiteLine(res.Sites[0])
	case len(res.Mappings) > 0:
		return "rss grows " + MappingsLine(res.Mappings[:min(len(res.Mappings), 2)])
	}
	return ""
}

// writeWhere writes the where block of the text report.
func (r *Report) writeWhere(w io.Writer) {
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		if l := MappingsLine(res.Mappings); l != "" {
			fmt.Fprintf(w, "  %s grows in: %s\n", n, l)
		}
		for i, s := range res.Sites {
			lead := "  " + n + " grows at:"
			if i > 0 {
				lead = strings.Repeat(" ", len(lead))
			}
			fmt.Fprintf(w, "%s %s%s\n", lead, SiteLine(s), siteEndpoints(s))
		}
	}
	if r.Where == nil {
		return
	}
	for _, note := range r.Where.Notes {
		fmt.Fprintf(w, "  where: %s\n", note)
	}
	if len(r.Where.Evidence) > 0 {
		var names []string
		for _, f := range r.Where.Evidence {
			names = append(names, f.Name)
		}
		fmt.Fprintf(w, "  evidence kept: %s\n", strings.Join(names, ", "))
	}
	if r.Where.EvidenceCut != "" {
		fmt.Fprintf(w, "  evidence cut: %s\n", r.Where.EvidenceCut)
	}
}

// Growing says whether a resource grows enough to look for where: a leak,
// or an inconclusive verdict whose slope is positive.
func Growing(r verdict.Resource) bool {
	return r.Verdict == verdict.Leak || (r.Verdict == verdict.Inconclusive && r.PerRequest > 0 && !math.IsNaN(r.PerRequest))
}

// WriteEvidence writes the kept snapshot files into dir's EvidenceDir.
func (r *Report) WriteEvidence(dir string) error {
	if r.Where == nil || len(r.Where.Evidence) == 0 {
		return nil
	}
	ed := filepath.Join(dir, EvidenceDir)
	if err := os.MkdirAll(ed, 0o755); err != nil {
		return fmt.Errorf("writing the evidence: %w", err)
	}
	for _, f := range r.Where.Evidence {
		if f.Data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(ed, filepath.Base(f.Name)), f.Data, 0o644); err != nil {
			return fmt.Errorf("writing the evidence: %w", err)
		}
	}
	return nil
}
