// Package abrun is the interleaved A/B soak: two builds of a server run at
// once, the load alternates between them in blocks (A B B A A B …, so a
// drift of the machine falls on both alike), each build is sampled on its
// own process tree and its resource slopes are fitted on its own requests,
// and the per-block pairs give the paired differences of CPU per request,
// latency, throughput and error rate. A sequential test (a normal-mixture
// confidence sequence, see HalfWidth) looks after every few pairs and
// stops the run as soon as the comparison is decided, with a false-alarm
// rate that holds at every look.
package abrun

import (
	"math"

	"github.com/soakd/soakd/soak/verdict"
)

// Build is one of the two builds compared: A the old one, B the new one.
type Build int

// The builds.
const (
	A Build = iota
	B
)

// String is "A" or "B".
func (b Build) String() string { return [...]string{"A", "B"}[b] }

// Block is the accounting of one block of load sent to one build.
type Block struct {
	Build    Build
	Requests uint64  // completed requests
	Errors   uint64  // of which failed
	Seconds  float64 // wall time of the block's load
	// CPU is the on-CPU time of the build's process tree during the
	// block, in seconds; Wait the time its threads were runnable but
	// waited for a core.
	CPU, Wait      float64
	P50, P99, P999 float64 // latency of the block's requests, seconds
}

// CPUPerRequest is the block's CPU seconds per completed request; NaN
// with no requests.
func (b Block) CPUPerRequest() float64 { return ratio(b.CPU, float64(b.Requests)) }

// Throughput is the block's completed requests per second.
func (b Block) Throughput() float64 { return ratio(float64(b.Requests), b.Seconds) }

// ErrorPercent is the share of the block's requests that failed, in
// percentage points.
func (b Block) ErrorPercent() float64 { return 100 * ratio(float64(b.Errors), float64(b.Requests)) }

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

// Tally is the evidence of an A/B run so far: each build's resource
// readings against its own cumulative requests, and the blocks in the
// order they ran. Blocks 2k and 2k+1 form pair k, one block of each
// build.
type Tally struct {
	// Points holds, per build, each resource's readings by name (the
	// names of Resources).
	Points [2]map[string][]verdict.Point
	Blocks []Block
	// Warmup is the number of first pairs left out of the paired
	// metrics: a build's first requests warm its caches and heap.
	Warmup int
}

// NewTally is an empty tally.
func NewTally() *Tally {
	return &Tally{Points: [2]map[string][]verdict.Point{{}, {}}}
}

// Add records one reading of build b's resource.
func (t *Tally) Add(b Build, resource string, p verdict.Point) {
	t.Points[b][resource] = append(t.Points[b][resource], p)
}

// Pairs returns the complete pairs after the warm-up, each as its A and
// B block.
func (t *Tally) Pairs() [][2]Block {
	var ps [][2]Block
	for i := 2 * t.Warmup; i+1 < len(t.Blocks); i += 2 {
		x, y := t.Blocks[i], t.Blocks[i+1]
		if x.Build == B {
			x, y = y, x
		}
		ps = append(ps, [2]Block{x, y})
	}
	return ps
}

// Contention is each build's seconds waited for a core per CPU second
// run, over the pairs after the warm-up; NaN for a build that ran no CPU.
func (t *Tally) Contention() (by [2]float64) {
	var wait, cpu [2]float64
	for _, p := range t.Pairs() {
		for _, b := range p {
			wait[b.Build] += b.Wait
			cpu[b.Build] += b.CPU
		}
	}
	for i := range by {
		by[i] = ratio(wait[i], cpu[i])
	}
	return by
}

// Requests is the requests of all blocks, and of each build's.
func (t *Tally) Requests() (total uint64, by [2]uint64) {
	for _, b := range t.Blocks {
		by[b.Build] += b.Requests
	}
	return by[A] + by[B], by
}

// Order is the build of block i: A B B A, A B B A, … Each pair holds one
// block of each, and the order within pairs alternates, so a linear
// drift over two pairs falls on both builds alike.
func Order(i int) Build {
	if (i/2)%2 == 0 {
		return Build(i % 2)
	}
	return Build(1 - i%2)
}
