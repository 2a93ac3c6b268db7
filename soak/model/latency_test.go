package model

import (
	"math"
	"testing"
)

// TestLatencyBlocks: past MaxLatencyBlocks intervals, neighbours merge in
// pairs; the blocks still cover the whole run, hold every request, and
// weigh each interval's quantiles by its requests.
func TestLatencyBlocks(t *testing.T) {
	var l LatencyBlocks
	const n = 3*MaxLatencyBlocks + 7
	var total uint64
	for i := range n {
		req := uint64(1 + i%3)
		total += req
		l.Add(LatencyBlock{Start: float64(i), Seconds: 1, Requests: req, P50: float64(req), P99: 2 * float64(req), P999: 3})
	}
	bs := l.Blocks()
	if len(bs) > MaxLatencyBlocks || len(bs) < MaxLatencyBlocks/4 {
		t.Fatalf("%d blocks; want at most %d and at least %d", len(bs), MaxLatencyBlocks, MaxLatencyBlocks/4)
	}
	var got uint64
	for i, b := range bs {
		got += b.Requests
		if i > 0 && math.Abs(b.Start-(bs[i-1].Start+bs[i-1].Seconds)) > 1e-9 {
			t.Fatalf("block %d starts at %v; want %v (the previous one's end)", i, b.Start, bs[i-1].Start+bs[i-1].Seconds)
		}
		if math.Abs(b.P999-3) > 1e-9 || math.Abs(b.P99-2*b.P50) > 1e-9 {
			t.Fatalf("block %d: %+v; want p99.9 3 and p99 = 2 p50", i, b)
		}
	}
	if last := bs[len(bs)-1]; got != total || bs[0].Start != 0 || last.Start+last.Seconds != n {
		t.Errorf("blocks hold %d requests over [%v, %v]; want %d over [0, %d]", got, bs[0].Start, last.Start+last.Seconds, total, n)
	}
	// Two intervals merged: their quantiles weighted by requests.
	var w LatencyBlocks
	w.Add(LatencyBlock{Requests: 1, Seconds: 1, P50: 1, P99: 1})
	w.Add(LatencyBlock{Start: 1, Seconds: 1, Requests: 3, P50: 5, P99: 5})
	w.span = 2
	w2 := merge(w.Blocks()[0], w.Blocks()[1])
	if w2.P50 != 4 {
		t.Errorf("merged p50 = %v; want (1·1 + 3·5)/4 = 4", w2.P50)
	}
}
