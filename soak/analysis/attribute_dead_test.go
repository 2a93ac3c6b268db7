package analysis

import (
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestAttributeLeavesTheDeadOut: samples taken after the target died
// (no memory, the counts still climbing as requests fail) are no
// evidence of where memory grew: the split with them is the split
// without them.
func TestAttributeLeavesTheDeadOut(t *testing.T) {
	var recs []model.Record
	var a, b uint64
	for i := range 300 {
		if (i/12)%2 == 0 { // the designed mix: blocks that favour one endpoint
			a, b = a+90, b+10
		} else {
			a, b = a+10, b+90
		}
		r := model.Record{Elapsed: float64(i), Phase: verdict.Soak, Requests: a + b, EndpointRequests: []uint64{a, b}}
		r.Alive, r.RSSValid, r.RSS = true, true, 50<<20+100*a+uint64(i%7)*4096
		recs = append(recs, r)
	}
	rss := func(r model.Record) (float64, bool) { return float64(r.RSS), r.RSSValid }
	opt := verdict.ResourceOptions{Name: "RSS", Unit: "bytes"}
	want := attribute(recs, rss, twoEndpoints, opt)
	if len(want) != 2 || want[0].Verdict != verdict.Leak {
		t.Fatalf("the live samples' split: %+v; want the first endpoint leaking", want)
	}
	for i := range 60 {
		a, b = a+50, b+50
		r := model.Record{Elapsed: float64(300 + i), Phase: verdict.Soak, Requests: a + b, EndpointRequests: []uint64{a, b}}
		r.RSSValid = true // a dead target reads 0 B
		recs = append(recs, r)
	}
	got := attribute(recs, rss, twoEndpoints, opt)
	if len(got) != 2 || got[0].PerRequest != want[0].PerRequest || got[1].PerRequest != want[1].PerRequest {
		t.Errorf("with the dead target's samples: %+v; without: %+v", got, want)
	}
}

var twoEndpoints = []string{"GET /leak", "GET /ok"}
