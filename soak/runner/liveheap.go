package runner

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/sites"
	"github.com/soakd/soakd/soak/verdict"
)

// liveHeap reads a garbage-collected target's live heap at each boundary
// of the designed mix's blocks, where the runtime serves it (a Go heap
// profile: sites.Probe.LiveHeap; a Node inspector given by the user:
// nodeHeap), so that the memory's split between the
// endpoints is fitted on a series without the collector's sawtooth
// (verdict.AttributeLiveHeap; docs/attribution.md). A reading forces a
// collection in the target, once a block (every 3–25 samples).
type liveHeap struct {
	probe heapReader
	close func() // ends the reader's session; nil: none
	eng   *load.Engine
	since time.Time
	now   func() time.Time
	log   *zap.Logger

	busy atomic.Bool // a reading is under way: a boundary meanwhile is skipped
	wg   sync.WaitGroup

	mu       sync.Mutex // guards below
	readings []model.LiveHeap
	sites    []map[string]float64 // by reading: live bytes by allocation site; nil when not read
	failed   int
	skipped  int
}

// heapReader reads the target's live heap now, forcing a collection
// first; sites is the live bytes by allocation site, nil when not read.
type heapReader interface {
	LiveHeap(ctx context.Context) (bytes float64, sites map[string]float64, err error)
}

var _ heapReader = (*sites.Probe)(nil)

// openLiveHeap returns the run's live-heap reader: nil unless the mix is
// designed and the target's runtime serves its live heap (a Node
// inspector is read only when Options.NodeInspect names it).
func (r *runner) openLiveHeap(ctx context.Context) *liveHeap {
	if r.mix == nil {
		if r.o.NodeInspect != "" {
			r.o.Log.Info("one endpoint or a fixed mix: nothing to split, the Node inspector is not read", zap.String("node_inspect", r.o.NodeInspect))
		}
		return nil
	}
	if r.o.NodeInspect != "" {
		return r.openNodeHeap(ctx)
	}
	if r.where == nil || !r.where.probe.ReadsLiveHeap() {
		return nil
	}
	return &liveHeap{probe: r.where.probe, eng: r.eng, since: r.start, now: r.o.Now, log: r.o.Log}
}

// boundary reads the live heap in the background at the end of a block
// in which endpoint ended was favoured (-1: the load's start), rec being
// the sample just taken.
func (l *liveHeap) boundary(ctx context.Context, ended int, rec model.Record) {
	if l == nil {
		return
	}
	if !l.busy.CompareAndSwap(false, true) {
		l.mu.Lock()
		l.skipped++
		l.mu.Unlock()
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer l.busy.Store(false)
		l.read(ctx, ended, rec.Incarnation, rec.Phase)
	}()
}

// wait waits for a reading under way, then ends the reader's session.
func (l *liveHeap) wait() {
	if l != nil {
		l.wg.Wait()
		if l.close != nil {
			l.close()
		}
	}
}

// atLoadEnd waits for a reading under way and takes the last one.
func (l *liveHeap) atLoadEnd(ctx context.Context, ended int, rec model.Record) {
	if l == nil {
		return
	}
	l.wg.Wait()
	l.read(ctx, ended, rec.Incarnation, rec.Phase)
}

func (l *liveHeap) read(ctx context.Context, ended, incarnation int, phase verdict.Phase) {
	before, t0 := l.eng.EndpointCompleted(), l.now()
	bytes, sites, err := l.probe.LiveHeap(ctx)
	after, t1 := l.eng.EndpointCompleted(), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if l.failed++; l.failed == 1 {
			l.log.Warn("reading the live heap at a block's end", zap.Error(err))
		}
		return
	}
	h := model.LiveHeap{Elapsed: (t0.Sub(l.since) + t1.Sub(t0)/2).Seconds(), Incarnation: incarnation, Phase: phase,
		Favoured: ended, Bytes: bytes, CostSeconds: t1.Sub(t0).Seconds(), Requests: make([]float64, len(before))}
	for j := range before {
		h.Requests[j] = (float64(before[j]) + float64(after[j])) / 2
	}
	l.readings = append(l.readings, h)
	l.sites = append(l.sites, sites)
}

// splitSites splits the growth of rss's allocation sites between the
// endpoints, on the readings' site bytes (verdict.AttributeLiveHeap on
// each site's series): what each endpoint's requests keep at each site.
func (l *liveHeap) splitSites(rep *model.Report) {
	if l == nil {
		return
	}
	rss, ok := rep.Resources["rss"]
	if !ok || len(rss.Sites) == 0 || len(rss.Endpoints) < 2 {
		return
	}
	names := make([]string, len(rss.Endpoints))
	for i, e := range rss.Endpoints {
		names[i] = e.Endpoint
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range rss.Sites {
		s := &rss.Sites[i]
		var pts []verdict.Point
		var counts [][]float64
		for j, h := range l.readings {
			if l.sites[j] == nil || len(h.Requests) != len(names) {
				continue
			}
			total := 0.0
			for _, c := range h.Requests {
				total += c
			}
			pts = append(pts, verdict.Point{Requests: total, Seconds: h.Elapsed, Value: l.sites[j][s.Site], Incarnation: h.Incarnation, Phase: h.Phase})
			counts = append(counts, h.Requests)
		}
		fits := verdict.AttributeLiveHeap(pts, counts, names, verdict.ResourceOptions{Name: s.Site, Unit: "bytes", Quantum: 1})
		s.Endpoints = nil
		for _, f := range fits {
			if f.CI95 == [2]float64{} {
				return // too few readings: no site is split
			}
			s.Endpoints = append(s.Endpoints, verdict.SiteEndpoint{Endpoint: f.Endpoint, PerRequest: f.PerRequest, CI95: f.CI95})
		}
	}
	rep.Resources["rss"] = rss
}

// series is the readings so far.
func (l *liveHeap) series() []model.LiveHeap {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]model.LiveHeap{}, l.readings...) // not nil: the heap was read
}

// liveSeries is the run's live-heap readings: a Go target's heap
// profile's, or a JVM's counters'; nil when none was read.
func (r *runner) liveSeries() []model.LiveHeap {
	if r.jvm != nil {
		return r.jvm.series()
	}
	return r.live.series()
}

// writeLiveHeap writes the readings hs as the run directory's
// liveheap.csv (nothing when hs is nil: no live heap was read).
func writeLiveHeap(dir string, hs []model.LiveHeap) error {
	if hs == nil || dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, model.LiveHeapFile))
	if err != nil {
		return err
	}
	if err := model.WriteLiveHeap(f, hs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
