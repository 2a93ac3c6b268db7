package verdict

import (
	"strings"
	"testing"
)

// TestTooFewNamesTheSetting: a resource with too few soak samples advises
// the option that samples it more often: --smaps-interval for PSS, whose
// cadence --interval does not change, and --interval by default.
func TestTooFewNamesTheSetting(t *testing.T) {
	pts := []Point{
		{Requests: 0, Seconds: 1, Value: 1 << 20, Incarnation: 1, Phase: Soak},
		{Requests: 1000, Seconds: 3, Value: 1 << 20, Incarnation: 1, Phase: Soak},
	}
	for _, c := range []struct{ setting, want string }{{"--smaps-interval", "(--smaps-interval)"}, {"", "(--interval)"}} {
		res := AnalyzeResource(pts, ResourceOptions{Name: "pss", Setting: c.setting, Unit: "bytes"})
		if res.Verdict != Inconclusive || !strings.Contains(res.Settle, c.want) {
			t.Errorf("setting %q: verdict %s, settle %q; want inconclusive, advising %s", c.setting, res.Verdict, res.Settle, c.want)
		}
	}
}
