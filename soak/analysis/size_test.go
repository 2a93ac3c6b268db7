package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestPartsAreJudgedAgainstTheTreesSize: PSS and USS, parts of the tree's
// memory, are held by the transient rule until they grow past the tree's
// RSS at the load's start, also when the analysis is limited to them and
// does not report the RSS (a real Go server's 2-minute soak at 10 req/s,
// testdata/verdicts/go-10rps-2m.csv, whose PSS read as a leak judged by
// its own level).
func TestPartsAreJudgedAgainstTheTreesSize(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "verdicts", "go-10rps-2m.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := model.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := Analyze(recs, nil, Options{})
	alone, _ := Analyze(recs, nil, Options{Resources: []string{"pss", "uss"}})
	if _, ok := alone["rss"]; ok {
		t.Errorf("rss reported by an analysis limited to pss and uss")
	}
	for _, name := range []string{"pss", "uss"} {
		for how, res := range map[string]map[string]verdict.Resource{"beside rss": all, "alone": alone} {
			r := res[name]
			if r.Verdict != verdict.Inconclusive || !strings.Contains(r.Reason, "plus the process tree's size (its RSS's 7.93 MiB)") {
				t.Errorf("%s %s: %s (%s); want inconclusive, judged against the RSS's 7.93 MiB", name, how, r.Verdict, r.Reason)
			}
		}
	}
}
