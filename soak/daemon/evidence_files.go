package daemon

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// handleEvidence serves one of a run's kept snapshot files (a heap
// profile, a class histogram, the smaps summaries, a --snapshot-cmd's
// output) as a download.
func (d *Daemon) handleEvidence(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	b, err := d.st.Evidence(id, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d kept no evidence file %q", id, name))
		return
	case err != nil:
		d.internalError(w, "reading the evidence", err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="run-%d-%s"`, id, name))
	w.Write(b)
}

// evidenceBase is the prefix of a run's evidence links.
func evidenceBase(id int64) string { return "/api/v1/runs/" + itoa(id) + "/evidence/" }

// describeWhere gives a memory leak's alert a description whose top line
// says where the memory grows (model.Report.TopFinding), when the final
// analysis found it.
func describeWhere(a alerts.Alert, rep *model.Report, res verdict.Resource) {
	top := rep.TopFinding()
	if top == "" || res.Unit != "bytes" {
		return
	}
	a.Annotations[alerts.AnnotationDescription] = top + "\n" + a.Annotations[alerts.AnnotationSummary]
}
