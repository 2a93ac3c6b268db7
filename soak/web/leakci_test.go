package web

import (
	"html"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// TestResourceTableShowsTheDecidingInterval: a leak's row gives the
// interval that decided it (ci95, which leak_ci95 repeats) and names the
// second half's own interval beneath when it reaches outside, so the
// table never sets "leak" beside an interval from below zero. A report
// made before issue 41 (ci95 widened, leak_ci95 the deciding one) names
// the wider one as before; a row without leak_ci95 (another verdict, or
// a report made before it) gives the reported interval alone.
func TestResourceTableShowsTheDecidingInterval(t *testing.T) {
	rep := loadRun(t, "testdata/run1")
	res := rep.Resources["rss"]
	res.Verdict, res.PerRequest, res.CI95 = verdict.Leak, 156, [2]float64{-63, 415}
	res.LeakCI95 = &[2]float64{21, 290}
	rep.Resources["rss"] = res
	decided, wide := units.Range(21, 290, "bytes"), units.Range(-63, 415, "bytes")
	pageHolds(t, rep, `<td class="num">`+decided+`<br><small>with the second half's: `+wide+`</small></td>`)

	res.CI95, res.LeakCI95 = [2]float64{21, 290}, &[2]float64{21, 290}
	res.SecondHalf = &verdict.SecondHalf{PerRequest: 176, CI95: [2]float64{-63, 415}}
	rep.Resources["rss"] = res
	pageHolds(t, rep, `<td class="num">`+decided+`<br><small>the second half alone: `+wide+`</small></td>`)

	res.CI95, res.LeakCI95, res.SecondHalf = [2]float64{-63, 415}, nil, nil
	rep.Resources["rss"] = res
	var b strings.Builder
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	if !strings.Contains(page, `<td class="num">`+wide+`</td>`) || strings.Contains(page, "with the second half's") {
		t.Errorf("without leak_ci95 the row should give %q alone", wide)
	}
}
