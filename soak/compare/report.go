package compare

import (
	"math"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// Blocks is how many time blocks a run's soak is cut into, at most: each
// holds at least three samples.
const Blocks = 20

// FromReport reads a run's slopes from its report and its time blocks
// from its records (none when the report came without its samples).
func FromReport(rep *model.Report) Run {
	r := Run{Slopes: map[string]Slope{}, Series: map[string][]Point{}, Blocks: SoakBlocks(rep.Records, Blocks), Requests: float64(rep.Phases.SoakRequests)}
	if len(rep.LatencyBlocks) > 0 {
		WithLatency(r.Blocks, rep.LatencyBlocks)
	}
	r.Contention = Contention(rep.Records)
	for name, res := range rep.Resources {
		mr, _ := model.ResourceNamed(name)
		r.Slopes[name] = Slope{Unit: res.Unit, PerRequest: res.PerRequest, CI95: res.CI95, Slow: mr.Slow, Series: mr.SeriesOrWhole(res.Series)}
		if pts := soakSeries(rep.Records, mr, r.Slopes[name].Series); len(pts) > 0 {
			r.Series[name] = pts
		}
	}
	if rep.Load != nil {
		r.P999 = rep.Load.Latency.P999
		if rep.Load.Mode == "open" {
			r.Rate = rep.Load.TargetRate
		}
		r.Concurrency = rep.Load.Concurrency
	}
	return r
}

// soakSeries reads a resource's soak readings from recs, on the series
// (column) its slope was fitted on; none when the target restarted in
// the soak or the resource is not one soakd knows.
func soakSeries(recs []model.Record, def model.ResourceDef, series string) []Point {
	if def.Value == nil {
		return nil
	}
	var pts []Point
	inc := -1
	for i := range recs {
		r := &recs[i]
		if r.Phase != verdict.Soak || !r.Alive {
			continue
		}
		v, ok := def.Value(*r)
		if !ok || def.SeriesOf(*r) != series {
			continue
		}
		if inc >= 0 && r.Incarnation != inc {
			return nil
		}
		inc = r.Incarnation
		pts = append(pts, Point{Requests: float64(r.Requests), Seconds: r.Elapsed, Value: v})
	}
	return pts
}

// SoakBlocks cuts the soak's records into at most n consecutive time
// blocks of at least three samples each. A block's CPU time is NaN when
// the target restarted within it or its CPU time was not read.
func SoakBlocks(recs []model.Record, n int) []Block {
	var soak []int // the soak's records, by index: a record is large
	for i := range recs {
		if recs[i].Phase == verdict.Soak {
			soak = append(soak, i)
		}
	}
	k := min(n, (len(soak)-1)/3)
	if k < 1 {
		return nil
	}
	out := make([]Block, 0, k)
	for j := range k {
		a, b := j*(len(soak)-1)/k, (j+1)*(len(soak)-1)/k
		out = append(out, block(recs, soak[a], soak[a+1:b+1]))
	}
	return out
}

// block sums the records at the indices in after the record at before.
func block(recs []model.Record, at int, in []int) Block {
	before, last := &recs[at], &recs[in[len(in)-1]]
	b := Block{Start: before.Elapsed, Seconds: last.Elapsed - before.Elapsed, CPUSeconds: math.NaN()}
	if last.Requests >= before.Requests {
		b.Requests = float64(last.Requests - before.Requests)
	}
	if last.Errors >= before.Errors {
		b.Errors = float64(last.Errors - before.Errors)
	}
	cpu0, cpu1 := before.CPUUser+before.CPUSystem, last.CPUUser+last.CPUSystem
	if last.Incarnation == before.Incarnation && cpu0 > 0 && cpu1 >= cpu0 {
		b.CPUSeconds = cpu1 - cpu0
	}
	if s0, s1 := before.SelfUser+before.SelfSystem, last.SelfUser+last.SelfSystem; s0 > 0 && s1 > s0 {
		b.SelfCPUSeconds = s1 - s0
	}
	var p99 []float64
	for _, i := range in {
		if r := &recs[i]; r.P99 > 0 && r.Rate > 0 {
			b.P50 += r.P50
			p99 = append(p99, r.P99)
		}
	}
	if len(p99) > 0 {
		b.P50, b.P99, b.P99s = b.P50/float64(len(p99)), median(p99), p99
	}
	return b
}

// WithLatency sets the blocks' latency from a run's latency blocks: each
// goes to the block its middle falls in: p50 weighted by its requests,
// p99 and p99.9 the median of the block's (Block.P99). A block none falls
// in has no latency.
func WithLatency(bs []Block, lat []model.LatencyBlock) {
	w := make([]float64, len(bs))
	for i := range bs {
		bs[i].P50, bs[i].P99, bs[i].P999, bs[i].P99s, bs[i].P999s = 0, 0, 0, nil, nil
	}
	j := 0
	for _, l := range lat {
		mid := l.Start + l.Seconds/2
		for j < len(bs) && mid >= bs[j].Start+bs[j].Seconds {
			j++
		}
		if j == len(bs) {
			break
		}
		if mid < bs[j].Start || l.Requests == 0 || l.P99 <= 0 {
			continue
		}
		n := float64(l.Requests)
		bs[j].P50 += n * l.P50
		w[j] += n
		bs[j].P99s = append(bs[j].P99s, l.P99)
		if l.P999 > 0 {
			bs[j].P999s = append(bs[j].P999s, l.P999)
		}
	}
	for i := range bs {
		if w[i] > 0 {
			bs[i].P50, bs[i].P99 = bs[i].P50/w[i], median(bs[i].P99s)
		}
		if len(bs[i].P999s) > 0 {
			bs[i].P999 = median(bs[i].P999s)
		}
	}
}

// Contention is the seconds the target's threads waited for a core per
// CPU second they ran over the soak, from the first and last soak records
// with a run-queue reading of the same incarnation; NaN when there are
// none or the target ran no CPU.
func Contention(recs []model.Record) float64 {
	first, last := -1, -1
	for i := range recs {
		if recs[i].Phase != verdict.Soak || !recs[i].RunqueueValid {
			continue
		}
		if first < 0 {
			first = i
		}
		if recs[i].Incarnation == recs[first].Incarnation {
			last = i
		}
	}
	if first < 0 || last == first {
		return math.NaN()
	}
	a, b := &recs[first], &recs[last]
	cpu := b.CPUUser + b.CPUSystem - a.CPUUser - a.CPUSystem
	if cpu <= 0 {
		return math.NaN()
	}
	return (b.RunqueueWait - a.RunqueueWait) / cpu
}
