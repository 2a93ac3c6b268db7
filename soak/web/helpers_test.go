package web

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/model"
)

func TestMain(m *testing.M) { os.Exit(soaktest.Main(m)) }

// loadRun reads a stored fixture run: report.json and samples.csv.
func loadRun(t testing.TB, dir string) *model.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep model.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	f, err := os.Open(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rep.Records, err = model.ReadCSV(f); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return &rep
}

// judged is run b judged against run a, as the daemon's compare page
// shows it.
func judged(a, b *model.Report) *Judgement {
	res := compare.Compare(compare.FromReport(a), compare.FromReport(b), compare.Options{Margins: compare.DefaultMargins(), Seed: 1})
	return &Judgement{OldID: 1, NewID: 2, Result: res}
}

// pageHolds renders rep's page and fails t for each want the page (its
// HTML entities unescaped) does not hold.
func pageHolds(t *testing.T, rep *model.Report, wants ...string) {
	t.Helper()
	var b strings.Builder
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range wants {
		if !strings.Contains(page, want) {
			t.Errorf("page does not hold %q", want)
		}
	}
}
