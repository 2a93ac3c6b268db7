package model

import (
	"fmt"
	"io"

	"github.com/soakd/soakd/soak/units"
)

// Grew names the process of the tree whose own series carries a growing
// resource's growth: the member whose fitted growth over the soak is the
// largest, when it is more than half the tree's.
type Grew struct {
	Resource string `json:"resource"` // e.g. "rss"
	PID      int32  `json:"pid"`
	Start    uint64 `json:"start_ticks"`
	Name     string `json:"name"` // comm
	Root     bool   `json:"root"` // it is the tree's root
	// Growth is the process's own fitted growth over the soak, and
	// TreeGrowth the tree's, fitted the same way over the same samples,
	// in Unit.
	Growth     float64 `json:"growth"`
	TreeGrowth float64 `json:"tree_growth"`
	Unit       string  `json:"unit"`
}

// String is the report's sentence, e.g. "rss grew in pid 4321 (python3):
// +22 MiB of the tree's +22.4 MiB over the soak".
func (g Grew) String() string {
	return fmt.Sprintf("%s grew in pid %d (%s): +%s of the tree's +%s over the soak",
		g.Resource, g.PID, g.Name, units.Amount(g.Growth, g.Unit), units.Amount(g.TreeGrowth, g.Unit))
}

// writeGrew names the process that carries each growth.
func (r *Report) writeGrew(w io.Writer) {
	for _, g := range r.Grew {
		fmt.Fprintf(w, "  %s\n", g)
	}
}
