package model

// LatencyBlock is the latency of one stretch of a run's load: the means,
// weighted by requests, of its progress intervals' (1 s) quantiles. soakd
// compare bootstraps over them.
type LatencyBlock struct {
	Start    float64 `json:"start_seconds"` // since the run started
	Seconds  float64 `json:"seconds"`
	Requests uint64  `json:"requests"`
	P50      float64 `json:"p50_seconds"`
	P99      float64 `json:"p99_seconds"`
	P999     float64 `json:"p99_9_seconds"`
	n        int     // intervals folded in
}

// MaxLatencyBlocks is the most blocks a run keeps: when full, neighbours
// are merged in pairs and each new block spans twice as many intervals.
const MaxLatencyBlocks = 512

// LatencyBlocks collects a run's progress intervals into at most
// MaxLatencyBlocks blocks of equal numbers of intervals. It is not safe
// for concurrent use.
type LatencyBlocks struct {
	blocks []LatencyBlock
	span   int // intervals per block
}

// Add folds one progress interval in.
func (l *LatencyBlocks) Add(iv LatencyBlock) {
	if l.span == 0 {
		l.span = 1
	}
	iv.n = 1
	if n := len(l.blocks); n > 0 && l.blocks[n-1].n < l.span {
		l.blocks[n-1] = merge(l.blocks[n-1], iv)
		return
	}
	if len(l.blocks) == MaxLatencyBlocks {
		for i := range MaxLatencyBlocks / 2 {
			l.blocks[i] = merge(l.blocks[2*i], l.blocks[2*i+1])
		}
		l.blocks, l.span = l.blocks[:MaxLatencyBlocks/2], 2*l.span
	}
	l.blocks = append(l.blocks, iv)
}

// Blocks returns a copy of the blocks so far.
func (l *LatencyBlocks) Blocks() []LatencyBlock { return append([]LatencyBlock(nil), l.blocks...) }

// merge joins two neighbouring blocks, their quantiles weighted by their
// requests.
func merge(a, b LatencyBlock) LatencyBlock {
	m := LatencyBlock{Start: a.Start, Seconds: b.Start + b.Seconds - a.Start, Requests: a.Requests + b.Requests, n: a.n + b.n}
	if m.Requests > 0 {
		wa, wb := float64(a.Requests)/float64(m.Requests), float64(b.Requests)/float64(m.Requests)
		m.P50, m.P99, m.P999 = wa*a.P50+wb*b.P50, wa*a.P99+wb*b.P99, wa*a.P999+wb*b.P999
	}
	return m
}
