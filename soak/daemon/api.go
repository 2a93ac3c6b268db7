package daemon

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/urlx"
)

// Limits of GET /api/v1/runs.
const (
	defaultRunsLimit = 50
	maxRunsLimit     = 1000
)

// Handler returns the daemon's HTTP handler: the API, /metrics, the health
// checks and the web pages.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/jobs", d.handleJobs)
	mux.HandleFunc("GET /api/v1/runs", d.handleRuns)
	mux.HandleFunc("GET /api/v1/runs/{id}", d.handleRun)
	mux.HandleFunc("GET /api/v1/runs/{id}/samples", d.handleSamples)
	mux.HandleFunc("GET /api/v1/runs/{id}/evidence/{name}", d.handleEvidence)
	mux.Handle("POST /api/v1/jobs/{name}/runs", d.auth(http.HandlerFunc(d.handleStart)))
	mux.Handle("POST /api/v1/runs/{id}/stop", d.auth(http.HandlerFunc(d.handleStop)))
	d.mountBaseline(mux)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowed(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": method not allowed (allowed: "+strings.Join(allow, ", ")+")")
			return
		}
		writeError(w, http.StatusNotFound, "no such API endpoint: "+r.Method+" "+r.URL.Path)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", d.handleReady)
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.o.Registry, promhttp.HandlerOpts{
		ErrorLog: zap.NewStdLog(d.log), Registry: d.o.Registry,
	}))
	d.mountWeb(mux)
	return d.readAuth(mux)
}

// allowed returns the methods that another route of mux serves r's path
// with: an existing path asked with the wrong method is a 405, not a 404.
func allowed(mux *http.ServeMux, r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/api/" {
			out = append(out, m)
		}
	}
	return out
}

// readAuth requires the token for every call but the health checks when
// the config's auth is "all" (the default off loopback).
func (d *Daemon) readAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		tok, all := d.token, d.cfg.EffectiveAuth() == config.AuthAll
		d.mu.Unlock()
		if all && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" && !tokenOK(r, tok) {
			deny(w, "this soakd needs the token for reads too (auth: all): send Authorization: Bearer <token>, or in a browser any user name and the token as password")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenOK tells whether r carries tok as a bearer token, or as the
// password of Basic authentication (what a browser can send); an empty
// tok lets everything through.
func tokenOK(r *http.Request, tok urlx.Secret) bool {
	if tok == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		_, got, ok = r.BasicAuth()
	}
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(tok.Reveal())) == 1
}

func deny(w http.ResponseWriter, msg string) {
	w.Header().Add("WWW-Authenticate", `Bearer realm="soakd"`)
	w.Header().Add("WWW-Authenticate", `Basic realm="soakd"`)
	writeError(w, http.StatusUnauthorized, msg)
}

// auth requires the bearer token on a mutating call whenever one is
// configured.
func (d *Daemon) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		tok := d.token
		d.mu.Unlock()
		if !tokenOK(r, tok) {
			deny(w, "this call needs Authorization: Bearer <token> (the config's token)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeJSON encodes v before writing anything, so that a value JSON cannot
// hold (a NaN) is a clean 500, not half a body.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": "encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func (d *Daemon) handleReady(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	ready := d.ready
	d.mu.Unlock()
	if !ready {
		writeError(w, http.StatusServiceUnavailable, "not ready")
		return
	}
	if !d.storeOK() {
		writeError(w, http.StatusServiceUnavailable, "not ready: writes to the run database fail (is the disk full?); see the log and soakd_store_write_errors_total")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// JobInfo is one job in GET /api/v1/jobs.
type JobInfo struct {
	Name     string     `json:"name"`
	Schedule string     `json:"schedule"`
	Timezone string     `json:"timezone,omitempty"`
	Next     *time.Time `json:"next,omitempty"`
	Target   string     `json:"target"`
	Alerts   []string   `json:"alerts"`
	Running  bool       `json:"running"`
	RunID    int64      `json:"run_id,omitempty"` // the running run
	// LastRun is the job's last finished run: while a run goes, the one
	// before it (the jobs table shows its verdict, not the running run's
	// none yet).
	LastRun *store.Run `json:"last_run,omitempty"`
}

// Jobs returns the configured jobs with their next tick and their state.
func (d *Daemon) Jobs() []JobInfo {
	d.mu.Lock()
	cfg := d.cfg
	out := make([]JobInfo, 0, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		ji := JobInfo{Name: j.Name, Schedule: j.Schedule, Timezone: j.Timezone, Target: targetOf(j),
			Alerts: append([]string{}, j.Alerts...)}
		if id, ok := d.entries[j.Name]; ok {
			if next := d.cron.Entry(id).Next; !next.IsZero() {
				ji.Next = &next
			}
		}
		if ar, ok := d.active[j.Name]; ok {
			ji.Running, ji.RunID = true, ar.id
		}
		out = append(out, ji)
	}
	d.mu.Unlock()
	for i := range out {
		// Only one run of a job goes at a time, the newest: the second
		// newest is finished when the newest is not.
		runs, err := d.st.Runs(out[i].Name, 2)
		if err != nil {
			continue
		}
		for _, r := range runs {
			if r.Status != store.StatusRunning {
				out[i].LastRun = &r
				break
			}
		}
	}
	return out
}

func (d *Daemon) handleJobs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, d.Jobs())
}

func (d *Daemon) handleRuns(w http.ResponseWriter, r *http.Request) {
	limit := defaultRunsLimit
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxRunsLimit {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want a whole number from 1 to %d", s, maxRunsLimit))
			return
		}
		limit = n
	}
	runs, err := d.st.Runs(r.URL.Query().Get("job"), limit)
	if err != nil {
		d.internalError(w, "listing runs", err)
		return
	}
	if runs == nil {
		runs = []store.Run{}
	}
	d.overlayUnsaved(runs)
	d.overlayLive(runs)
	writeJSON(w, http.StatusOK, runs)
}

// overlayLive fills the requests of running runs, which the store only
// has at the end, from their last sample.
func (d *Daemon) overlayLive(runs []store.Run) {
	for i := range runs {
		if runs[i].Status != store.StatusRunning {
			continue
		}
		if ar := d.activeByID(runs[i].ID); ar != nil {
			_, runs[i].Requests = ar.progress()
		}
	}
}

func (d *Daemon) internalError(w http.ResponseWriter, what string, err error) {
	d.log.Error("api: "+what, zap.Error(err))
	writeError(w, http.StatusInternalServerError, what+": "+err.Error())
}

// runID parses the {id} path value; it writes the error itself.
func runID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("run ID %q: want a positive whole number", r.PathValue("id")))
		return 0, false
	}
	return id, true
}

// LiveReport returns the latest analysis of a running run (computing one
// when the live loop has not run yet), or nil when the run is not running.
func (d *Daemon) LiveReport(id int64) *model.Report {
	ar := d.activeByID(id)
	if ar == nil {
		return nil
	}
	return ar.report()
}

func (d *Daemon) handleRun(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(w, r)
	if !ok {
		return
	}
	if rep := d.LiveReport(id); rep != nil {
		w.Header().Set("X-Soakd-Live", "true")
		writeJSON(w, http.StatusOK, rep)
		return
	}
	if b, ok := d.unsavedReportJSON(id); ok {
		w.Header().Set("X-Soakd-Unsaved", "true")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	b, err := d.st.ReportJSON(id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.runMissing(w, id)
		return
	case err != nil:
		d.internalError(w, "reading the report", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// runMissing answers a run without a report: 404 with why.
func (d *Daemon) runMissing(w http.ResponseWriter, id int64) {
	run, err := d.st.Run(id)
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d not found", id))
		return
	}
	msg := fmt.Sprintf("run %d (%s) has no report", id, run.Status)
	if run.Error != "" {
		msg += ": " + run.Error
	}
	writeError(w, http.StatusNotFound, msg)
}

// samplesChunk is how many samples handleSamples reads from the store at a
// time: the memory a download holds, whatever the run's length.
const samplesChunk = 1000

// handleSamples streams a run's samples as CSV or as a JSON array, a chunk
// at a time (store.EachSampleChunk): a download of an 8-hour run at 20 ms
// (1.4 million samples) costs the daemon one chunk of memory, and a slow
// client holds no database connection. The status is sent before the
// first chunk; an error after it cuts the body short and is logged.
func (d *Daemon) handleSamples(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(w, r)
	if !ok {
		return
	}
	switch _, err := d.st.Run(id); {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d not found", id))
		return
	case err != nil:
		d.internalError(w, "reading the samples", err)
		return
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	var each func([]model.Record) error
	var end func() error
	if wantsCSV(r) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="run-%d-samples.csv"`, id))
		cw := model.NewRowWriter(bw)
		each, end = cw.Write, cw.Flush
	} else {
		w.Header().Set("Content-Type", "application/json")
		ja := jsonArray{w: bw}
		each, end = ja.write, ja.close
	}
	err := d.st.EachSampleChunk(id, samplesChunk, each)
	if err == nil {
		err = end()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		d.log.Warn("api: streaming a run's samples", zap.Int64("run", id), zap.Error(err))
	}
}

// jsonArray writes records as one JSON array, element by element, in
// json.MarshalIndent's layout (two-space indent), as writeJSON would
// write the whole slice.
type jsonArray struct {
	w   *bufio.Writer
	n   int
	buf bytes.Buffer
}

// write calls each record's MarshalJSON directly and indents its output:
// json.MarshalIndent scans and compacts a Marshaler's output first, which
// cost three quarters of the time.
func (a *jsonArray) write(recs []model.Record) error {
	for _, r := range recs {
		b, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		a.buf.Reset()
		if err := json.Indent(&a.buf, b, "  ", "  "); err != nil {
			return err
		}
		sep := ",\n  "
		if a.n == 0 {
			sep = "[\n  "
		}
		a.n++
		a.w.WriteString(sep)
		if _, err := a.w.Write(a.buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func (a *jsonArray) close() error {
	end := "\n]\n"
	if a.n == 0 {
		end = "[]\n"
	}
	_, err := a.w.WriteString(end)
	return err
}

func wantsCSV(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "csv":
		return true
	case "json":
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/csv")
}

func (d *Daemon) handleStart(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	id, err := d.StartRun(name, TriggerAPI)
	var busy *BusyError
	switch {
	case errors.Is(err, ErrUnknownJob):
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found", name))
	case errors.As(err, &busy) && isForm(r): // the button of a job already running: show its run
		http.Redirect(w, r, "/runs/"+itoa(busy.RunID), http.StatusSeeOther)
	case errors.As(err, &busy):
		writeJSON(w, http.StatusConflict, map[string]any{"error": busy.Error(), "run_id": busy.RunID})
	case errors.Is(err, ErrShuttingDown):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case err != nil:
		d.internalError(w, "starting the run", err)
	case isForm(r): // the web page's Run now button: show the run
		http.Redirect(w, r, "/runs/"+itoa(id), http.StatusSeeOther)
	default:
		w.Header().Set("Location", "/api/v1/runs/"+itoa(id))
		writeJSON(w, http.StatusAccepted, map[string]any{"run_id": id, "job": name, "status": store.StatusRunning})
	}
}

func (d *Daemon) handleStop(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(w, r)
	if !ok {
		return
	}
	if err := d.StopRun(id); err != nil {
		if _, rerr := d.st.Run(id); errors.Is(rerr, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("run %d not found", id))
			return
		}
		writeError(w, http.StatusConflict, fmt.Sprintf("run %d is not running", id))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": id, "status": "stopping"})
}
