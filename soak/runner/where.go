package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/sites"
	"github.com/soakd/soakd/soak/verdict"
)

// mapper is the part of probes.Sampler that reads the tree's mappings.
type mapper interface {
	MapsNow() (probes.MapSnapshot, bool)
	TakeMaps() []probes.MapSnapshot
	Root() (pid int32, comm string, ok bool)
}

var _ mapper = (*probes.Sampler)(nil)

// where finds where a run's growth lives: the tree's mappings at the
// soak's start and end (and paced between, on the smaps cadence), and the
// allocation sites the target's runtime lets soakd see. It is used by the
// sampling goroutine, but for the start snapshot's goroutine (startDone).
type where struct {
	ctx   context.Context // the run's: the snapshots stop with it
	maps  mapper
	probe *sites.Probe
	ev    *sites.Evidence

	first, last *probes.MapSnapshot
	smaps       bytes.Buffer // every snapshot's groups, a JSON line each
	reads       int
	skipped     int // paced reads left out of smaps.jsonl (drain)
	cost        time.Duration

	started      bool          // the mappings' start snapshot is taken
	sitesStarted bool          // the sites' start snapshot is under way
	startDone    chan struct{} // closed once it is taken
}

// openWhere prepares the run's snapshots; nil when the run samples no
// local process tree or Options.NoWhere says so.
func (r *runner) openWhere(ctx context.Context) *where {
	m, ok := r.sampler.(mapper)
	if !ok || r.o.NoWhere || r.remote != nil {
		return nil
	}
	w := &where{ctx: ctx, maps: m, ev: sites.NewEvidence(r.o.EvidenceLimit), startDone: make(chan struct{})}
	pid, comm, _ := m.Root()
	t := sites.Target{PID: int(pid), Comm: comm}
	if eps := r.o.Load.Endpoints; len(eps) > 0 {
		t.URL = eps[0].URL
	}
	so := r.o.Sites
	so.Log = r.o.Log
	w.probe = sites.Open(ctx, so, t, w.ev)
	return w
}

// observe takes the paced snapshots of each sample, and the start
// snapshots at the soak's first sample: the mappings now, the allocation
// sites in the background (a JVM's class histogram takes a full GC).
func (w *where) observe(rec model.Record, requests func() uint64) {
	if w == nil {
		return
	}
	w.drain()
	if !w.sitesStarted && rec.Phase == verdict.Soak {
		w.sitesStarted = true
		go func() {
			defer close(w.startDone)
			w.probe.Snap(w.ctx, "start", requests)
		}()
	}
	if w.started || rec.Phase != verdict.Soak {
		return
	}
	w.started = true
	if s, ok := w.maps.MapsNow(); ok {
		w.first = &s
		w.drain()
	}
}

// beforeLoad takes the start snapshot that forces a full GC (a JVM's
// class histogram) before the load starts: the GC's effect on the RSS
// falls outside the fitted soak, and the count of requests between the
// snapshots is exact (jcmd spends a second or more starting a JVM of its
// own, during which a running load's count would move).
func (w *where) beforeLoad(requests func() uint64) {
	if w == nil || !w.probe.ForcesGC() {
		return
	}
	w.sitesStarted = true
	defer close(w.startDone)
	w.probe.Snap(w.ctx, "start", requests)
}

// atLoadEnd takes the end snapshots, once the start ones are done.
func (w *where) atLoadEnd(ctx context.Context, requests func() uint64) {
	if w == nil || !w.sitesStarted {
		return
	}
	select {
	case <-w.startDone:
	case <-ctx.Done():
		return
	}
	w.drain()
	if s, ok := w.maps.MapsNow(); ok && w.started {
		w.last = &s
		w.drain()
	}
	w.probe.Snap(ctx, "end", requests)
}

// drain moves the snapshots read since the last drain into the smaps
// evidence, as JSON lines of their groups. Past half the evidence limit
// the paced lines are counted, not kept: the end's line still is.
func (w *where) drain() {
	for _, s := range w.maps.TakeMaps() {
		w.reads++
		w.cost += s.Cost
		if int64(w.smaps.Len()) > w.ev.Limit()/2 {
			w.skipped++
			continue
		}
		w.keepLine(s)
	}
}

func (w *where) keepLine(s probes.MapSnapshot) {
	s.Anon = nil
	if b, err := json.Marshal(s); err == nil {
		w.smaps.Write(append(b, '\n'))
	}
}

// fill puts the findings into the report: the mappings and sites of a
// growing RSS, and the notes and evidence.
func (w *where) fill(rep *model.Report) {
	if w == nil {
		return
	}
	w.drain()
	if w.skipped > 0 && w.last != nil {
		w.keepLine(*w.last)
	}
	if w.smaps.Len() > 0 {
		w.ev.Add("smaps.jsonl", "smaps", w.smaps.Bytes(), false)
	}
	for _, g := range rep.Grew {
		if !g.Root {
			w.probe.Rehint(int(g.PID), g.Name)
		}
	}
	wh := &model.Where{Notes: w.probe.Notes(), MapsReads: w.reads, EvidenceLimit: w.ev.Limit()}
	if w.skipped > 0 {
		wh.Notes = append(wh.Notes, fmt.Sprintf("smaps.jsonl leaves out %d of the %d smaps reads to stay within the evidence limit; it keeps the first ones and the soak's end", w.skipped, w.reads))
	}
	if w.reads > 0 {
		wh.MapsCostSeconds = w.cost.Seconds() / float64(w.reads)
	}
	if rss, ok := rep.Resources["rss"]; ok {
		if model.Growing(rss) && w.first != nil && w.last != nil {
			rss.Mappings = mappingGrowth(*w.first, *w.last)
		}
		rss.Sites = w.probe.Sites()
		rep.Resources["rss"] = rss
	}
	wh.Evidence, wh.EvidenceCut = w.ev.Files(), w.ev.Cut()
	rep.Where = wh
}

// minShare is the least share of the growth a mapping class must carry
// to be reported.
const minShare = 0.01

// mappingGrowth splits the RSS growth between two snapshots by mapping
// class, the classes that grew most first.
func mappingGrowth(a, b probes.MapSnapshot) []verdict.Mapping {
	var out []verdict.Mapping
	total := 0.0
	for name, g := range b.Groups {
		d := float64(g.RSS) - float64(a.Groups[name].RSS)
		if d <= 0 {
			continue
		}
		total += d
		out = append(out, verdict.Mapping{Name: name, GrowthBytes: d})
	}
	slices.SortFunc(out, func(x, y verdict.Mapping) int {
		return cmp.Or(cmp.Compare(y.GrowthBytes, x.GrowthBytes), cmp.Compare(x.Name, y.Name))
	})
	kept := out[:0]
	for _, m := range out {
		m.Share = m.GrowthBytes / total
		if m.Share < minShare {
			break
		}
		if m.Name == probes.MapAnon {
			m.New = newAnon(a.Anon, b.Anon)
		}
		kept = append(kept, m)
	}
	return kept[:min(len(kept), 6)]
}

// newAnon describes the anonymous mappings of b that a did not have.
func newAnon(a, b []probes.AnonMapping) *verdict.NewMappings {
	type key struct {
		pid   int32
		start uint64
	}
	old := make(map[key]bool, len(a))
	for _, m := range a {
		old[key{m.PID, m.Start}] = true
	}
	n := &verdict.NewMappings{}
	bySize := map[uint64]int{}
	for _, m := range b {
		if old[key{m.PID, m.Start}] {
			continue
		}
		n.Count++
		n.Bytes += float64(m.RSS)
		bySize[m.Size]++
		if m.Arena {
			n.Arenas++
		}
	}
	if n.Count == 0 {
		return nil
	}
	for size, c := range bySize {
		n.Sizes = append(n.Sizes, verdict.SizeCount{SizeBytes: float64(size), Count: c})
	}
	slices.SortFunc(n.Sizes, func(x, y verdict.SizeCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(y.SizeBytes, x.SizeBytes))
	})
	return n
}
