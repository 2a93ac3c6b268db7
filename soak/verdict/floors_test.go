package verdict

import (
	"math"
	"testing"
)

func TestFloorsExhaustion(t *testing.T) {
	// 1 request a second; 10 000 left to a limit of 10⁶: reaching it
	// within 7 days takes more than 10 000/604 800 per request. That is
	// the lowest floor here, far under the per-request, horizon and
	// limit-share ones.
	th := Thresholds{MinPerRequest: 1000, Horizon: 86400, HorizonGrowth: 1e12, HorizonLimitShare: 0.5, Exhaustion: 7 * 86400}
	fl := floorsFor(th, 3600, 1e6, 990e3)
	want := 10e3 / (7 * 86400)
	if math.Abs(fl.exhaust-want) > 1e-12 {
		t.Errorf("exhaustion floor = %g; want %g", fl.exhaust, want)
	}
	if got := fl.leak(); math.Abs(got-want) > 1e-12 {
		t.Errorf("leak floor = %g; want the exhaustion floor %g (floors %+v)", got, want, fl)
	}
	// Past the limit, any growth reaches it: the floor is zero, not in
	// force, and the others decide.
	if fl := floorsFor(th, 3600, 1e6, 2e6); fl.exhaust != 0 || fl.leak() != fl.limitShare {
		t.Errorf("past the limit: floors %+v, leak %g; want exhaust 0 and the limit-share floor", fl, fl.leak())
	}
}

// TestExhaustionFloorMakesALeak: growth under the per-request, horizon
// and limit-share floors is still a leak when it reaches the limit within
// Exhaustion. 0.5 B/request at 1 000 req/s over an hour is 1.7 MiB, above
// the 1 MiB total floor and under the horizon floor (64 MiB a day is
// 0.78 B/request); 4 MiB from a 1 GiB limit, it gets there in hours.
func TestExhaustionFloorMakesALeak(t *testing.T) {
	opt := rss
	opt.Limit = 1 << 30
	for _, tt := range []struct {
		slope float64
		want  string
	}{{0.5, Leak}, {0.05, Inconclusive}} {
		pts := line(Soak, 0, 3600, opt.Limit-4*mib, tt.slope, 0)
		for i := range pts {
			pts[i].Value = pages(pts[i].Value)
		}
		res := AnalyzeResource(pts, opt)
		if res.Verdict != tt.want || res.TimeToExhaustionSeconds == nil {
			t.Errorf("%g B/request, 4 MiB under the limit: got %s, time to exhaustion %v (%s); want %s with a time to exhaustion",
				tt.slope, res.Verdict, res.TimeToExhaustionSeconds, res.Reason, tt.want)
		}
	}
}
