package runner

import (
	"time"

	"github.com/soakd/soakd/soak/load"
)

// The designed mix (see load.Engine.Favour): with two or more endpoints
// the runner favours one endpoint at a time, for a block of samples, so
// that the endpoints' counts vary apart and the analysis can split each
// resource's growth between them (verdict.AttributeEndpoints). Blocks are
// counted in samples, not requests, so that every block spans several
// samples whatever the throughput; the next endpoint favoured is the one
// furthest behind its weight, so the targets file's weights hold over the
// run.

// blocksPerEndpoint is how many blocks each endpoint is favoured in over
// a soak of the planned length.
const blocksPerEndpoint = 12

// Samples per block: at least minBlockSamples so that a block's contrast
// is seen by several samples, at most maxBlockSamples so that a long
// soak at a fixed interval still changes its mix.
const (
	minBlockSamples = 3
	maxBlockSamples = 25
)

// mixer drives the engine's favoured endpoint. It is used by the sampling
// goroutine only.
type mixer struct {
	eng     *load.Engine
	weights []int
	block   int // samples per block
	left    int // samples left in the current block
	cur     int // the favoured endpoint
	// perBlock, when set, is the young collections a block spans instead:
	// a JVM whose retained heap is read at each of them (jvmHeap). A
	// block then ends at the first sample after perBlock collections in
	// it, and at most maxBlockSamples·collectionBlocks samples in.
	perBlock    int
	collections int // in the current block
}

// collectionBlocks is the young collections a block spans when a JVM's
// heap is read at them. Measured on seeded series of the zoo JVM's
// readings (TestAttributeJVMHeap, 400 series each, 100 000 requests, a
// collection every 6 500): blocks of 12 samples (about one collection)
// put the leaking endpoint within 25 % of its truth in 272/400 and
// covered it in 371; blocks of 2, 3 and 4 collections in 388, 399 and
// 400, covering it in 374, 391 and 390.
const collectionBlocks = 3

// byCollections makes the blocks span collectionBlocks young
// collections each (see perBlock), from the next block on.
func (m *mixer) byCollections() {
	if m != nil {
		m.perBlock = collectionBlocks
	}
}

// collected counts a young collection read in the current block.
func (m *mixer) collected() {
	if m != nil {
		m.collections++
	}
}

// newMixer returns the mixer of a run over endpoints, or nil when the
// mix stays fixed: one endpoint, or Options.FixedMix.
func newMixer(o *Options, eng *load.Engine) *mixer {
	eps := eng.Options().Endpoints
	if len(eps) < 2 || o.FixedMix {
		return nil
	}
	m := &mixer{eng: eng, weights: make([]int, len(eps)), cur: -1}
	for i, ep := range eps {
		m.weights[i] = ep.Weight
	}
	m.block = blockSamples(plannedSamples(o), len(eps))
	return m
}

// plannedSamples is about how many samples the load will have: the
// pacer's aim when the interval is automatic, else the duration over
// the interval (the aim again when only requests bound the run).
func plannedSamples(o *Options) int {
	if o.Interval > 0 && o.Load.Duration > 0 {
		return int(o.Load.Duration / max(o.Interval, time.Millisecond))
	}
	return targetSoakSamples
}

// blockSamples sizes a block so that each of k endpoints is favoured in
// blocksPerEndpoint blocks of the planned samples.
func blockSamples(planned, k int) int {
	return min(maxBlockSamples, max(minBlockSamples, planned/(blocksPerEndpoint*k)))
}

// start favours the first endpoint, before the load starts.
func (m *mixer) start() {
	if m == nil {
		return
	}
	m.next(make([]uint64, len(m.weights)))
}

// sampled counts one sample under load with the endpoints' counts then,
// and moves to the next block when this one is done: ended is then the
// endpoint favoured in the block that ended, else -1.
func (m *mixer) sampled(counts []uint64) (ended int) {
	if m == nil {
		return -1
	}
	m.left--
	done := m.left <= 0
	if m.perBlock > 0 {
		done = m.collections >= m.perBlock || m.left <= -maxBlockSamples*m.perBlock
	}
	if done {
		ended = m.cur
		m.next(counts)
		return ended
	}
	return -1
}

// favoured is the endpoint favoured now, -1 without a mixer.
func (m *mixer) favoured() int {
	if m == nil {
		return -1
	}
	return m.cur
}

func (m *mixer) next(counts []uint64) {
	m.cur = load.NextFavoured(counts, m.weights, m.cur)
	m.eng.Favour(m.cur)
	m.left, m.collections = m.block, 0
}
