package runner

import (
	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/hsperf"
	"github.com/soakd/soakd/soak/model"
)

// jvmHeap reads a HotSpot target's heap counters from its hsperfdata file
// (soak/hsperf: a file read, no JVM started, no pause) at every sample
// under the designed mix, and keeps a live-heap reading each time a young
// collection happened since the sample before: the heap retained after
// it (survivors and old generation), which changes only at collections,
// while eden fills with every request's garbage. The objects an endpoint
// keeps survive into it; a clean endpoint's garbage dies in eden. So the
// readings split like a Go target's live heap (verdict.AttributeLiveHeap;
// docs/attribution.md), without forcing a collection.
type jvmHeap struct {
	path string
	log  *zap.Logger

	last    hsperf.Heap // at the sample before
	prevAt  float64     // that sample's elapsed seconds
	prevReq []uint64    // and its endpoints' counts
	started bool

	readings []model.LiveHeap
	failed   int
}

// openJVMHeap returns the run's hsperfdata reader: nil unless the mix is
// designed, the target's root is a JVM sampled locally and its hsperfdata
// file can be read.
func (r *runner) openJVMHeap() *jvmHeap {
	if r.mix == nil || r.collector != "JVM" || r.remote != nil {
		return nil
	}
	m, ok := r.sampler.(mapper)
	if !ok {
		return nil
	}
	pid, _, ok := m.Root()
	if !ok {
		return nil
	}
	path, err := hsperf.FileOf(int(pid))
	if err == nil {
		_, err = hsperf.ReadHeap(path)
	}
	if err != nil {
		r.o.Log.Warn("the JVM's heap counters cannot be read: its memory's split between the endpoints is not judged", zap.Error(err))
		return nil
	}
	r.o.Log.Info("reading the JVM's heap counters at each sample", zap.String("hsperfdata", path))
	return &jvmHeap{path: path, log: r.o.Log}
}

// observe reads the counters at sample rec and keeps a reading when a
// young collection happened since the sample before (kept says so). The
// collection's moment within the two samples is not known: the reading
// takes their mean time and counts.
func (j *jvmHeap) observe(rec model.Record, favoured int) (kept bool) {
	if j == nil {
		return false
	}
	h, err := hsperf.ReadHeap(j.path)
	if err != nil {
		if j.failed++; j.failed == 1 {
			j.log.Warn("reading the JVM's hsperfdata", zap.Error(err))
		}
		return false
	}
	if h.InYoung {
		return false // read again at the next sample, once it has ended
	}
	if j.started && h.Young != j.last.Young && len(j.prevReq) == len(rec.EndpointRequests) {
		req := make([]float64, len(rec.EndpointRequests))
		for i, c := range rec.EndpointRequests {
			req[i] = (float64(c) + float64(j.prevReq[i])) / 2
		}
		j.readings = append(j.readings, model.LiveHeap{Elapsed: (rec.Elapsed + j.prevAt) / 2, Incarnation: rec.Incarnation, Phase: rec.Phase,
			Favoured: favoured, Bytes: h.Retained(), Requests: req})
		kept = true
	}
	j.last, j.prevAt, j.prevReq, j.started = h, rec.Elapsed, append(j.prevReq[:0], rec.EndpointRequests...), true
	return kept
}

// series is the readings (not nil: the counters were read).
func (j *jvmHeap) series() []model.LiveHeap {
	if j == nil {
		return nil
	}
	return append([]model.LiveHeap{}, j.readings...)
}
