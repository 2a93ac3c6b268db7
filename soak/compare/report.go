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
	r := Run{Slopes: map[string]Slope{}, Blocks: SoakBlocks(rep.Records, Blocks), Requests: float64(rep.Phases.SoakRequests)}
	for name, res := range rep.Resources {
		mr, _ := model.ResourceNamed(name)
		r.Slopes[name] = Slope{Unit: res.Unit, PerRequest: res.PerRequest, CI95: res.CI95, Slow: mr.Slow}
	}
	if rep.Load != nil {
		r.P999 = rep.Load.Latency.P999
	}
	return r
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
	b := Block{Seconds: last.Elapsed - before.Elapsed, CPUSeconds: math.NaN()}
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
	var n float64
	for _, i := range in {
		if r := &recs[i]; r.P99 > 0 && r.Rate > 0 {
			b.P50 += r.P50
			b.P99 += r.P99
			n++
		}
	}
	if n > 0 {
		b.P50, b.P99 = b.P50/n, b.P99/n
	}
	return b
}
