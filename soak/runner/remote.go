package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// remoteDefaultInterval is the sampling interval of a remote source when
// --interval is not set: each sample is an HTTP request to the target or
// to Prometheus, which the /proc pacer's CPU budget does not see.
const remoteDefaultInterval = time.Second

// openRemote opens the remote source and warns when the planned run is
// too short for a Prometheus source's scrape interval.
func (r *runner) openRemote(ctx context.Context) error {
	src, err := remote.Open(ctx, r.o.Remote, r.o.Log)
	if err != nil {
		return err
	}
	r.remote, r.sampler = src, src
	if p, ok := src.(interface{ ScrapeInterval() time.Duration }); ok {
		if iv, d := p.ScrapeInterval(), r.o.Load.Duration; iv > 0 && d > 0 && d < remote.MinRun(iv) {
			r.o.Log.Warn("the run is too short for the scrape interval: Prometheus holds one sample per scrape, and a fit needs "+
				fmt.Sprint(remote.MinScrapes)+" in the soak; the verdict will be inconclusive",
				zap.Duration("duration", d), zap.Duration("scrape_interval", iv), zap.Duration("minimum", remote.MinRun(iv)))
		}
	}
	return nil
}

// fetchRemote replaces the spooled records with the source's own samples
// when it holds them (a Prometheus server), each joined with the load's
// progress at its time, for the final analysis (r.final), and rewrites
// samples.csv with them.
func (r *runner) fetchRemote(ctx context.Context) {
	f, ok := r.remote.(remote.Fetcher)
	if !ok || r.samples < 2 {
		return
	}
	live, err := r.spool.Records()
	if err != nil || len(live) < 2 {
		return // report() reads them again and says why
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	samples, err := f.Fetch(ctx, r.start, r.o.Now())
	if err != nil {
		r.o.Log.Warn("the range query over the run failed; the verdict uses the live samples", zap.Error(err))
		r.fetchErr = err
		return
	}
	r.final = joinSamples(live, samples, r.start)
	if r.o.OutDir == "" {
		return
	}
	w, err := model.CreateCSV(filepath.Join(r.o.OutDir, "samples.csv"))
	if err != nil {
		r.o.Log.Error("rewriting samples.csv", zap.Error(err))
		return
	}
	defer w.Close()
	for _, rec := range r.final {
		if err := w.Write(rec); err != nil {
			r.o.Log.Error("rewriting samples.csv", zap.Error(err))
			return
		}
	}
}

// joinSamples makes a record of each sample taken from start to the last
// record, with the load's progress at its time: the requests, errors and
// soakd's own CPU interpolated between the live records around it, the
// phase, rate and latency of the later one.
func joinSamples(recs []model.Record, samples []probes.Sample, start time.Time) []model.Record {
	out := make([]model.Record, 0, len(samples))
	last := recs[len(recs)-1].Time
	i := 0
	for _, s := range samples {
		if s.Time.Before(start) || s.Time.After(last) {
			continue
		}
		for i < len(recs)-1 && recs[i].Time.Before(s.Time) {
			i++
		}
		next := recs[i]
		prev := next
		if i > 0 {
			prev = recs[i-1]
		}
		f := 0.0
		if span := next.Time.Sub(prev.Time); span > 0 {
			f = float64(s.Time.Sub(prev.Time)) / float64(span)
		}
		lerp := func(a, b float64) float64 { return a + f*(b-a) }
		rec := model.Record{Sample: s, Elapsed: s.Time.Sub(start).Seconds(), Phase: next.Phase, P50: next.P50, P99: next.P99}
		rec.Requests = uint64(lerp(float64(prev.Requests), float64(next.Requests)))
		rec.Errors = uint64(lerp(float64(prev.Errors), float64(next.Errors)))
		rec.SelfUser, rec.SelfSystem = lerp(prev.SelfUser, next.SelfUser), lerp(prev.SelfSystem, next.SelfSystem)
		rec.SelfRSS = next.SelfRSS
		if n := len(out); n > 0 {
			p := out[n-1]
			if dt := rec.Elapsed - p.Elapsed; dt > 0 && rec.Requests >= p.Requests {
				rec.Rate = float64(rec.Requests-p.Requests) / dt
			}
		}
		out = append(out, rec)
	}
	return out
}

// remoteInfo is the report's account of the remote source, with a
// verdict for each resource the source gives but no sample held.
func (r *runner) remoteInfo(rep *model.Report) {
	src := r.remote
	ri := &model.RemoteInfo{Absent: src.Absent(), Notes: src.Notes()}
	if r.fetchErr != nil {
		ri.Notes = append(ri.Notes, "range query failed, so the verdict uses the live samples: "+r.fetchErr.Error())
	}
	rep.Target.Remote = ri
	why := "no sample of the run held a reading"
	if len(ri.Notes) > 0 {
		why += " (" + ri.Notes[len(ri.Notes)-1] + ")"
	}
	for _, res := range model.Resources {
		n := res.Name
		if _, ok := rep.Resources[n]; res.Remote && !ok && ri.Absent[n] == "" {
			rep.Resources[n] = verdict.Resource{Verdict: verdict.Inconclusive, Reason: n + ": " + why}
		}
	}
	for _, x := range r.o.Remote.Metrics {
		e, err := remote.ParseExtra(x)
		if _, ok := rep.Resources[e.Name]; err == nil && !ok {
			rep.Resources[e.Name] = verdict.Resource{Verdict: verdict.Inconclusive, Reason: e.Name + ": " + why}
		}
	}
	rep.Verdict = analysis.Overall(rep.Resources)
}
