package verdict

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// teeth are a series' cycles between sudden drops (a GC's): the median
// drop (the median of the dropWindow samples before it less that of the
// ones after: a cycle's range would count the noise's extremes in), and
// the median cycle's length in seconds and requests; ok with at least two
// whole cycles.
type teeth struct {
	size, seconds, requests float64
	ok                      bool
}

// sawtoothOf measures the cycles that cycleStarts finds.
func sawtoothOf(s *series, quantum float64) teeth {
	at := cycleStarts(s, quantum)
	if len(at) < 3 {
		return teeth{}
	}
	var size, sec, req []float64
	for j := 1; j < len(at); j++ {
		sec = append(sec, s.sec[at[j]]-s.sec[at[j-1]])
		req = append(req, s.x[at[j]]-s.x[at[j-1]])
	}
	for _, i := range at {
		k := min(dropWindow, i, len(s.y)-i)
		size = append(size, trend.Median(append([]float64(nil), s.y[i-k:i]...))-trend.Median(append([]float64(nil), s.y[i:i+k]...)))
	}
	return teeth{size: trend.Median(size), seconds: trend.Median(sec), requests: trend.Median(req), ok: true}
}

// sawtoothText names, for an inconclusive verdict, a sawtooth larger than
// the growth the fitted slope adds per cycle as its reason (issue 41,
// item 7): the trend is read from the cycles' troughs, and while each
// tooth outgrows a cycle's growth only many cycles show it. It gives the
// soak's length that the advice to run more implies, at this throughput;
// "" when there is no such sawtooth.
func sawtoothText(s *series, f fit, d decision, rph, quantum float64, unit string) string {
	st := sawtoothOf(s, quantum)
	grow := f.whole.Slope * st.requests
	if !st.ok || f.whole.Slope <= 0 || st.size <= grow {
		return ""
	}
	t := fmt.Sprintf("; a sawtooth of %s every %s, larger than the growth per cycle (%s at the fitted slope)",
		amount(st.size, unit), secs(st.seconds), amount(grow, unit))
	if more := d.more; rph > 0 && more > 0 && !math.IsInf(more, 0) && !math.IsNaN(more) {
		t += ": run at least " + secs(f.seconds+more/rph*3600) + " in all to decide"
	}
	return t
}
