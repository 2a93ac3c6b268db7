package analysis

import (
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// Records that read RSS and threads are judged on them; the same records
// without RSSValid and ThreadsValid (a remote source without those series)
// hold no reading, and the analysis names no verdict for them.
func TestOnlyReadResourcesAreJudged(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	records := func(read bool) []model.Record {
		var recs []model.Record
		for i := range 120 {
			recs = append(recs, model.Record{
				Sample: probes.Sample{Time: start.Add(time.Duration(i) * time.Second), Alive: true, Incarnation: 1,
					RSS: 50<<20 + uint64(i)*100<<10, RSSValid: read, Threads: 8, ThreadsValid: read,
					FDs: 12, FDsValid: true},
				Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(i) * 1000,
			})
		}
		return recs
	}
	for _, read := range []bool{true, false} {
		res, _ := Analyze(records(read), nil, Options{})
		for _, name := range []string{"rss", "threads"} {
			if _, judged := res[name]; judged != read {
				t.Errorf("records with the flags %v: %s judged %v; want %v", read, name, judged, read)
			}
		}
		if _, ok := res["fds"]; !ok {
			t.Errorf("records with the flags %v: fds not judged; want it judged", read)
		}
	}
}
