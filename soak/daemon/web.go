package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/web"
)

// Web page settings.
const (
	indexRuns      = 100 // runs listed on the index
	refreshSeconds = 5   // a running run's page reloads itself this often
)

// mountWeb adds the web pages (package soak/web) to mux.
func (d *Daemon) mountWeb(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", d.pageIndex)
	mux.HandleFunc("GET /runs/{id}", d.pageRun)
	mux.HandleFunc("GET /compare", d.pageCompare)
	mux.HandleFunc("GET /sweeps/{id}", d.pageSweep)
}

// writePage renders a page into a buffer first, so that a rendering error
// becomes a clean 500 rather than half a page.
func (d *Daemon) writePage(w http.ResponseWriter, render func(*bytes.Buffer) error) {
	buf := pageBufs.Get().(*bytes.Buffer)
	defer putPageBuf(buf)
	if err := render(buf); err != nil {
		d.log.Error("web: rendering a page", zap.Error(err))
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// pageBufs holds the buffers pages are rendered into: a run's page is about
// 150 KB, and a live page is rendered every 5 s while a browser shows it;
// growing a fresh buffer to that size each time made about 0.5 MB of
// garbage per view.
var pageBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putPageBuf returns buf to pageBufs, unless a page of unusual size (a
// comparison of long runs) grew it past 4 MiB.
func putPageBuf(buf *bytes.Buffer) {
	if buf.Cap() > 4<<20 {
		return
	}
	buf.Reset()
	pageBufs.Put(buf)
}

func (d *Daemon) pageIndex(w http.ResponseWriter, r *http.Request) {
	data := web.IndexData{Now: d.o.Now()}
	for _, j := range d.Jobs() {
		jv := web.JobView{Name: j.Name, Schedule: j.Schedule, Running: j.Running}
		if j.Next != nil {
			jv.Next = *j.Next
		}
		if j.LastRun != nil {
			jv.LastVerdict, jv.LastRunID = j.LastRun.Verdict, j.LastRun.ID
		}
		data.Jobs = append(data.Jobs, jv)
	}
	runs, err := d.st.Runs("", indexRuns)
	if err != nil {
		http.Error(w, "listing runs: "+err.Error(), http.StatusInternalServerError)
		return
	}
	for _, run := range runs {
		data.Runs = append(data.Runs, d.runView(run))
	}
	d.writePage(w, func(b *bytes.Buffer) error { return web.Index(b, data) })
}

func (d *Daemon) runView(r store.Run) web.RunView {
	end := r.Ended
	if end.IsZero() {
		end = d.o.Now()
	}
	v := web.RunView{
		ID: r.ID, Job: r.Job, Status: r.Status, Verdict: r.Verdict, Started: r.Started,
		Duration: end.Sub(r.Started).Round(time.Second), Requests: r.Requests, RSSPerRequest: r.RSSPerRequest,
	}
	if r.Status == store.StatusRunning {
		withLive(&v, d.LiveReport(r.ID))
	}
	return v
}

// withLive fills a running run's requests and RSS growth, which the store
// only has at the end, from its live analysis, when there is one.
func withLive(v *web.RunView, rep *model.Report) {
	if rep == nil {
		return
	}
	if n := len(rep.Records); n > 0 {
		v.Requests = rep.Records[n-1].Requests
	}
	if res, ok := rep.Resources["rss"]; ok {
		v.RSSPerRequest = res.PerRequest
	}
}

func (d *Daemon) pageRun(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "run ID: want a whole number", http.StatusBadRequest)
		return
	}
	run, rep, live, err := d.runReport(id)
	if err != nil {
		if d.keptSweep(run, id) {
			// a sweep keeps no soak report in the store: its page is /sweeps/ID
			http.Redirect(w, r, "/sweeps/"+itoa(id), http.StatusSeeOther)
			return
		}
		d.pageError(w, err)
		return
	}
	opt := web.PageOptions{
		Title: fmt.Sprintf("soakd: %s run %d", run.Job, id), RunID: id, Job: run.Job, Live: live,
		Links: []web.Link{{Text: "All runs", Href: "/"}, {Text: "Report JSON", Href: "/api/v1/runs/" + itoa(id)},
			{Text: "Samples CSV", Href: "/api/v1/runs/" + itoa(id) + "/samples?format=csv"}},
		EvidenceBase: evidenceBase(id),
	}
	if !live {
		opt.Baseline, opt.Pin = d.baselineViews(run)
		opt.Status, opt.Error = run.Status, run.Error
	}
	if live {
		opt.RefreshSeconds = refreshSeconds
		if ar := d.activeByID(id); ar != nil {
			if opt.Charts, err = ar.liveCharts(); err != nil {
				d.log.Error("web: rendering a live run's charts", zap.Error(err))
				http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
	}
	d.writePage(w, func(b *bytes.Buffer) error { return web.RunReport(b, rep, opt) })
}

func (d *Daemon) pageError(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	d.log.Error("web: reading a run", zap.Error(err))
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// runReport returns a run with its report and records: the live analysis
// while it runs, else the stored report with the stored samples.
//
// A running run's records are its live reservoir (DefaultReservoir records
// at most, an even thinning of the whole run): a view costs the same at
// any run length. Its page draws the charts of the latest live analysis
// (activeRun.liveCharts), rendered once per analysis. Walking the run's
// samples in the store instead, as the page did, decoded every sample on
// every view (every 5 s while the page is open): about 0.5 s of CPU and
// 100 MB of garbage per view at 37 000 samples, and the daemon's RSS rose
// and fell 5 MiB with each view's GC cycles.
func (d *Daemon) runReport(id int64) (store.Run, *model.Report, bool, error) {
	run, err := d.st.Run(id)
	if err != nil {
		return run, nil, false, fmt.Errorf("run %d: %w", id, err)
	}
	if ar := d.activeByID(id); ar != nil {
		// the live analysis, with the reservoir as it is now
		rep := *ar.report()
		rep.Records = ar.records()
		return run, &rep, true, nil
	}
	if u, ok := d.unsavedRun(id); ok && u.rep != nil {
		return u.run, u.rep, false, nil
	}
	b, err := d.st.ReportJSON(id)
	if err != nil {
		return run, nil, false, fmt.Errorf("run %d (%s) has no report: %w", id, run.Status, err)
	}
	var rep model.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return run, nil, false, fmt.Errorf("run %d: stored report: %w", id, err)
	}
	if rep.Records, err = d.st.Samples(id); err != nil {
		return run, nil, false, fmt.Errorf("run %d: %w", id, err)
	}
	return run, &rep, false, nil
}

func (d *Daemon) pageCompare(w http.ResponseWriter, r *http.Request) {
	var ids [2]int64
	for i, k := range []string{"a", "b"} {
		id, err := strconv.ParseInt(r.URL.Query().Get(k), 10, 64)
		if err != nil {
			http.Error(w, "compare: want ?a=RUN_ID&b=RUN_ID", http.StatusBadRequest)
			return
		}
		ids[i] = id
	}
	runA, repA, _, err := d.runReport(ids[0])
	if err != nil {
		d.pageError(w, err)
		return
	}
	runB, repB, _, err := d.runReport(ids[1])
	if err != nil {
		d.pageError(w, err)
		return
	}
	j := &web.Judgement{OldID: ids[0], NewID: ids[1], Result: d.compareRuns(repA, repB, ids[0], ids[1])}
	d.writePage(w, func(b *bytes.Buffer) error {
		return web.Compare(b, repA, repB, d.runView(runA), d.runView(runB), j)
	})
}

// baselineViews are a finished run's comparison with its baseline, when
// it has one, and the button that pins it as its job's baseline, when it
// has a report and its job is still configured.
func (d *Daemon) baselineViews(run store.Run) (*web.Judgement, *web.PinButton) {
	var j *web.Judgement
	base, _ := d.st.JobBaseline(run.Job)
	if res, old, err := d.storedComparison(run.ID); err == nil {
		j = &web.Judgement{OldID: old, NewID: run.ID, Baseline: true, Pinned: base.RunID == old && base.Pinned, Result: res}
	} else if !errors.Is(err, store.ErrNotFound) {
		d.log.Warn("web: reading a run's comparison", zap.Int64("run", run.ID), zap.Error(err))
	}
	if !d.knownJob(run.Job) {
		return j, nil
	}
	return j, &web.PinButton{Job: run.Job, RunID: run.ID, IsBaseline: base.RunID == run.ID, Pinned: base.RunID == run.ID && base.Pinned}
}
