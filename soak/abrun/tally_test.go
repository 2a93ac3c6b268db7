package abrun

import (
	"math"
	"testing"
)

// TestOrderCounterbalanced: A B B A A B B A …: every pair holds one block
// of each build, and over every two pairs each build comes first once.
func TestOrderCounterbalanced(t *testing.T) {
	want := "ABBAABBAABBA"
	got := ""
	for i := range len(want) {
		got += Order(i).String()
	}
	if got != want {
		t.Errorf("order %s; want %s", got, want)
	}
}

func TestTallyPairs(t *testing.T) {
	tl := NewTally()
	tl.Warmup = 1
	for i := range 7 {
		tl.Blocks = append(tl.Blocks, Block{Build: Order(i), Requests: uint64(100 + i)})
	}
	ps := tl.Pairs()
	if len(ps) != 2 {
		t.Fatalf("%d pairs; want 2 (3 complete, 1 warm-up)", len(ps))
	}
	for _, p := range ps {
		if p[A].Build != A || p[B].Build != B {
			t.Errorf("pair %+v; want its A block first", p)
		}
	}
	if ps[0][A].Requests != 103 || ps[0][B].Requests != 102 || ps[1][A].Requests != 104 || ps[1][B].Requests != 105 {
		t.Errorf("pairs %+v; want blocks 2 (B) and 3 (A), then 4 (A) and 5 (B)", ps)
	}
	total, by := tl.Requests()
	if total != 100+101+102+103+104+105+106 || by[A]+by[B] != total {
		t.Errorf("requests %d (%v); want every block's", total, by)
	}
}

func TestBlockRates(t *testing.T) {
	b := Block{Requests: 200, Errors: 3, Seconds: 0.5, CPU: 0.01}
	if b.CPUPerRequest() != 0.01/200 || b.Throughput() != 400 || b.ErrorPercent() != 1.5 {
		t.Errorf("%+v: cpu/req %v, throughput %v, errors %v %%; want 5e-05, 400, 1.5", b, b.CPUPerRequest(), b.Throughput(), b.ErrorPercent())
	}
	if !math.IsNaN(Block{}.CPUPerRequest()) {
		t.Errorf("an empty block's CPU per request is a number; want NaN")
	}
}
