package load

// The designed mix: with several endpoints, a fixed mix keeps their counts
// in the same proportion all run long, so a resource's growth cannot be
// split between them (the counts are collinear). Favour lets the caller
// vary the mix in blocks: while endpoint j is favoured, FavourShare of the
// requests go to j and the rest follow the weights. The caller (the
// runner, which knows the sampling cadence) chooses the blocks; Mix keeps
// the overall weights by favouring next the endpoint furthest behind its
// weight.

// FavourShare is the share of requests that go to the favoured endpoint
// (the rest follow the weights).
const FavourShare = 0.7

// favourPermille is FavourShare in thousandths, for the hot path.
const favourPermille = 700

// Favour makes endpoint i (an index into Options.Endpoints) the favoured
// one from the next request on; -1 returns to the fixed mix. Safe to
// call from any goroutine while the engine runs; an index out of range
// is taken as -1.
func (e *Engine) Favour(i int) {
	if i < 0 || i >= len(e.eps) || len(e.eps) < 2 {
		i = -1
	}
	e.favour.Store(int32(i))
}

// Favoured is the endpoint favoured now, or -1 for the fixed mix.
func (e *Engine) Favoured() int { return int(e.favour.Load()) }

// EndpointCompleted returns each endpoint's completed requests so far
// (successes and errors), in the order of Options.Endpoints. Like
// Counters it takes each worker's lock once: call it at a sampling
// cadence, not per request.
func (e *Engine) EndpointCompleted() []uint64 {
	n := make([]uint64, len(e.eps))
	e.eachWorker(func(w *worker) {
		w.st.mu.Lock()
		defer w.st.mu.Unlock()
		for i, s := range w.st.eps {
			n[i] += s.requests
		}
	})
	return n
}

// NextFavoured is the endpoint a balanced schedule favours next: the one
// furthest behind its share of weights (by completed counts), ties to
// the lowest index after prev, so equal weights take turns.
func NextFavoured(counts []uint64, weights []int, prev int) int {
	k := len(counts)
	if k < 2 || len(weights) != k {
		return -1
	}
	var total, wsum float64
	for i := range counts {
		total += float64(counts[i])
		wsum += float64(max(weights[i], 0))
	}
	if wsum == 0 {
		return -1
	}
	best, bestDef := -1, 0.0
	for step := 1; step <= k; step++ {
		i := (prev + step) % k
		if i < 0 {
			i += k
		}
		if weights[i] <= 0 {
			continue
		}
		def := float64(weights[i])/wsum*total - float64(counts[i]) // requests behind its share
		if best < 0 || def > bestDef+0.5 {
			best, bestDef = i, def
		}
	}
	return best
}
