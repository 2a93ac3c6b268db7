package load

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/soakd/soakd/soak/urlx"
)

// maAlpha is the weight of the newest interval in MovingRate, an
// exponential moving average as openload's MaTps.
const maAlpha = 0.1

// reporter calls OnInterval every Interval from one goroutine, and once
// more at the end for the partial last interval.
type reporter struct {
	e       *Engine
	last    time.Time
	prevReq uint64
	ma      float64
	scratch *hdrhistogram.Histogram
	done    sync.WaitGroup
}

func newReporter(e *Engine, start time.Time) *reporter {
	return &reporter{e: e, last: start, ma: -1, scratch: newHist()}
}

// start launches the loop; closing the returned channel ends it after a
// final report.
func (r *reporter) start() chan struct{} {
	stop := make(chan struct{})
	if r.e.opts.OnInterval == nil {
		return stop
	}
	r.done.Go(func() {
		t := time.NewTicker(r.e.opts.Interval)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				r.e.opts.OnInterval(r.take(now))
			case <-stop:
				r.e.opts.OnInterval(r.take(time.Now()))
				return
			}
		}
	})
	return stop
}

func (r *reporter) wait() { r.done.Wait() }

// take collects and resets every worker's interval histogram.
func (r *reporter) take(now time.Time) Interval {
	h := r.scratch
	h.Reset()
	var req, errs, bytesIn uint64
	r.e.eachWorker(func(w *worker) {
		w.st.mu.Lock()
		h.Merge(w.st.ivl)
		w.st.total.Merge(w.st.ivl) // one record per request, folded here
		w.st.ivl.Reset()
		req += w.st.completed.Load()
		errs += w.st.errors.Load()
		bytesIn += w.st.bytesIn
		w.st.mu.Unlock()
	})
	iv := Interval{Start: r.last, End: now, Requests: req, Errors: errs, Count: req - r.prevReq, BytesIn: bytesIn}
	iv.InFlight, iv.Waiting = r.e.inFlight()
	if secs := now.Sub(r.last).Seconds(); secs > 0 {
		iv.Rate = float64(iv.Count) / secs
	}
	if r.ma < 0 {
		r.ma = iv.Rate
	} else {
		r.ma += maAlpha * (iv.Rate - r.ma)
	}
	iv.MovingRate = r.ma
	if h.TotalCount() > 0 {
		iv.P50 = usToSec(h.ValueAtQuantile(50))
		iv.P99 = usToSec(h.ValueAtQuantile(99))
		iv.P999 = usToSec(h.ValueAtQuantile(99.9))
		iv.Mean = h.Mean() / 1e6
	}
	r.last, r.prevReq = now, req
	return iv
}

func usToSec(us int64) float64 { return float64(us) / 1e6 }

// percentRows are the rows of Summary.Percentiles, as in ab's table.
var percentRows = []float64{50, 66, 75, 80, 90, 95, 98, 99, 99.9, 100}

// summary merges every worker's accounting.
func (e *Engine) summary(start, end time.Time) *Summary {
	s := &Summary{
		Mode: "closed", Concurrency: e.opts.Concurrency, KeepAlive: e.opts.KeepAlive,
		ErrorsByCause: map[string]uint64{}, StatusClasses: map[string]uint64{},
		MissedSends:     e.missed.Load(),
		DurationSeconds: end.Sub(start).Seconds(), StoppedBy: e.stoppedBy,
	}
	if e.opts.Rate > 0 {
		s.Mode, s.TargetRate = "open", e.opts.Rate
	}
	s.TimeoutSeconds = e.opts.Timeout.Seconds()
	s.Endpoints = make([]EndpointCount, len(e.eps))
	urls := make([]string, len(e.eps))
	for i, ep := range e.opts.Endpoints {
		s.Endpoints[i] = EndpointCount{Method: ep.Method, URL: urlx.Redact(ep.URL)}
		urls[i] = ep.URL
	}
	h := newHist()
	var texts []textEntry
	e.eachWorker(func(w *worker) {
		w.st.mu.Lock()
		defer w.st.mu.Unlock()
		h.Merge(w.st.total)
		h.Merge(w.st.ivl) // not yet folded into total (or no reporter)
		s.add(&w.st)
		texts = append(texts, w.st.texts...)
	})
	s.ErrorTexts = mergeTexts(texts, urls)
	if s.DurationSeconds > 0 {
		s.RPS = float64(s.Requests) / s.DurationSeconds
	}
	s.setLatency(h)
	return s
}

// add sums one worker's counters into s; the caller holds st.mu.
func (s *Summary) add(st *stats) {
	s.Requests += st.completed.Load()
	s.Errors += st.errors.Load()
	s.Successes += st.successes
	s.BytesIn += st.bytesIn
	s.BytesOut += st.bytesOut
	s.Connections += st.connections
	s.Abandoned += st.abandoned
	s.LateSends += st.late
	s.Censored += st.censored
	s.Unanswered += st.unanswered
	for i, n := range st.eps {
		s.Endpoints[i].Requests += n.requests
		s.Endpoints[i].Errors += n.errors
	}
	for i, n := range st.causes {
		if n > 0 {
			s.ErrorsByCause[causes[i]] += n
		}
	}
	for c, n := range st.classes {
		if n > 0 {
			s.StatusClasses[string(rune('0'+c))+"xx"] += n
		}
	}
}

// setLatency fills Latency and Percentiles from h (microseconds).
func (s *Summary) setLatency(h *hdrhistogram.Histogram) {
	if h.TotalCount() == 0 {
		return
	}
	s.Latency = LatencySummary{
		Min:  usToSec(h.Min()),
		Mean: h.Mean() / 1e6,
		P50:  usToSec(h.ValueAtQuantile(50)),
		P90:  usToSec(h.ValueAtQuantile(90)),
		P99:  usToSec(h.ValueAtQuantile(99)),
		P999: usToSec(h.ValueAtQuantile(99.9)),
		Max:  usToSec(h.Max()),
	}
	for _, p := range percentRows {
		s.Percentiles = append(s.Percentiles, Percentile{Percent: p, Seconds: usToSec(h.ValueAtQuantile(p))})
	}
}
