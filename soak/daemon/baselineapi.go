package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/store"
)

// mountBaseline adds the baseline and comparison endpoints to mux.
func (d *Daemon) mountBaseline(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/jobs/{name}/baseline", d.handleBaseline)
	mux.Handle("POST /api/v1/jobs/{name}/baseline", d.auth(http.HandlerFunc(d.handlePin)))
	mux.Handle("DELETE /api/v1/jobs/{name}/baseline", d.auth(http.HandlerFunc(d.handleUnpin)))
	mux.HandleFunc("GET /api/v1/runs/{id}/comparison", d.handleComparison)
	mux.HandleFunc("GET /api/v1/compare", d.handleCompare)
}

// baselineJSON is a job's baseline in the API.
type baselineJSON struct {
	Job    string `json:"job"`
	RunID  int64  `json:"run_id"`
	Pinned bool   `json:"pinned"`
}

// comparisonJSON is a run's comparison with its baseline in the API.
type comparisonJSON struct {
	RunID      int64 `json:"run_id"`
	BaselineID int64 `json:"baseline_run_id"`
	compare.Result
}

func (d *Daemon) knownJob(name string) bool {
	for _, j := range d.Jobs() {
		if j.Name == name {
			return true
		}
	}
	return false
}

func (d *Daemon) handleBaseline(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := d.st.JobBaseline(name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q has no baseline: no good run yet (clean, requests ok) and none pinned", name))
	case err != nil:
		d.internalError(w, "reading the baseline", err)
	default:
		writeJSON(w, http.StatusOK, baselineJSON{Job: name, RunID: b.RunID, Pinned: b.Pinned})
	}
}

// handlePin pins a run as its job's baseline: the run's ID in the query
// (?run=ID), a form field run (the run page's button, which is then
// redirected back to the run's page), or a JSON body {"run_id": ID}.
func (d *Daemon) handlePin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	id, err := pinnedRun(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	run, err := d.st.Run(id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d not found", id))
		return
	case err != nil:
		d.internalError(w, "reading the run", err)
		return
	case run.Job != name || !d.knownJob(name):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("run %d is a run of job %q, not of %q: pin it on its own job", id, run.Job, name))
		return
	case run.Status == store.StatusRunning:
		writeError(w, http.StatusConflict, fmt.Sprintf("run %d is still running: pin it once it has finished", id))
		return
	}
	if _, err := d.st.ReportJSON(id); err != nil {
		writeError(w, http.StatusConflict, fmt.Sprintf("run %d has no report to compare with: pin a run that has one", id))
		return
	}
	if err := d.st.SetBaseline(name, id, true); err != nil {
		d.internalError(w, "pinning the baseline", err)
		return
	}
	if isForm(r) {
		http.Redirect(w, r, "/runs/"+itoa(id), http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, baselineJSON{Job: name, RunID: id, Pinned: true})
}

func isForm(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
}

// pinnedRun reads the run to pin from the request.
func pinnedRun(r *http.Request) (int64, error) {
	s := r.URL.Query().Get("run")
	if s == "" && isForm(r) {
		s = r.PostFormValue("run")
	}
	if s == "" && r.Body != nil {
		var body struct {
			RunID int64 `json:"run_id"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("the body: want JSON {\"run_id\": ID}: %v", err)
		}
		if body.RunID > 0 {
			return body.RunID, nil
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, errors.New("which run? give ?run=ID or the body {\"run_id\": ID}")
	}
	return id, nil
}

// handleUnpin unpins the job's baseline: it stays the baseline until the
// next good run replaces it.
func (d *Daemon) handleUnpin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := d.st.JobBaseline(name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q has no baseline", name))
		return
	case err != nil:
		d.internalError(w, "reading the baseline", err)
		return
	}
	if err := d.st.SetBaseline(name, b.RunID, false); err != nil {
		d.internalError(w, "unpinning the baseline", err)
		return
	}
	writeJSON(w, http.StatusOK, baselineJSON{Job: name, RunID: b.RunID})
}

func (d *Daemon) handleComparison(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(w, r)
	if !ok {
		return
	}
	res, base, err := d.storedComparison(id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d has no comparison: its job had no baseline when it finished, or it is the baseline", id))
	case err != nil:
		d.internalError(w, "reading the comparison", err)
	default:
		writeJSON(w, http.StatusOK, comparisonJSON{RunID: id, BaselineID: base, Result: res})
	}
}

// storedComparison reads a run's stored comparison with its baseline.
func (d *Daemon) storedComparison(id int64) (compare.Result, int64, error) {
	var res compare.Result
	base, b, err := d.st.Comparison(id)
	if err != nil {
		return res, 0, err
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return res, 0, fmt.Errorf("run %d: stored comparison: %w", id, err)
	}
	return res, base, nil
}

// handleCompare judges run b against run a: ?a=OLD&b=NEW.
func (d *Daemon) handleCompare(w http.ResponseWriter, r *http.Request) {
	ids, err := comparePair(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := d.judge(ids)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case err != nil:
		d.internalError(w, "comparing the runs", err)
	default:
		writeJSON(w, http.StatusOK, comparisonJSON{RunID: ids[1], BaselineID: ids[0], Result: res})
	}
}

// comparePair reads ?a=OLD&b=NEW.
func comparePair(r *http.Request) ([2]int64, error) {
	var ids [2]int64
	for i, k := range []string{"a", "b"} {
		id, err := strconv.ParseInt(r.URL.Query().Get(k), 10, 64)
		if err != nil || id < 1 {
			return ids, errors.New("compare: want ?a=OLD_RUN_ID&b=NEW_RUN_ID")
		}
		ids[i] = id
	}
	return ids, nil
}

// judge compares run ids[1] against run ids[0].
func (d *Daemon) judge(ids [2]int64) (compare.Result, error) {
	_, a, _, err := d.runReport(ids[0])
	if err != nil {
		return compare.Result{}, err
	}
	_, b, _, err := d.runReport(ids[1])
	if err != nil {
		return compare.Result{}, err
	}
	return d.compareRuns(a, b, ids[0], ids[1]), nil
}
