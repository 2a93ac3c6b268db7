package web

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var (
	svgElem   = regexp.MustCompile(`(?s)<svg[^>]*>.*?</svg>`)
	svgOpen   = regexp.MustCompile(`<svg[^>]*>`)
	svgTitle  = regexp.MustCompile(`(?s)<title[^>]*>.*?</title>|<desc[^>]*>.*?</desc>`)
	svgText   = regexp.MustCompile(`(?s)<text[^>]*>(.*?)</text>`)
	styleElem = regexp.MustCompile(`(?s)<style>.*?</style>`)
)

// outline normalises a page for a golden file: the CSS becomes a marker,
// and each SVG keeps its opening tag, title and description and the list
// of its text labels, with its path data reduced to a count.
func outline(page string) string {
	page = styleElem.ReplaceAllString(page, "<style>/* templates/style.css */</style>")
	return svgElem.ReplaceAllStringFunc(page, func(svg string) string {
		var b strings.Builder
		b.WriteString(svgOpen.FindString(svg))
		for _, m := range svgTitle.FindAllString(svg, -1) {
			b.WriteString("\n" + m)
		}
		var texts []string
		for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
			texts = append(texts, m[1])
		}
		fmt.Fprintf(&b, "\n<!-- %d paths; text: %s -->\n</svg>", strings.Count(svg, "<path"), strings.Join(texts, " | "))
		return b.String()
	})
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got %q\nwant %q\n(run go test -update if the change is meant)", path, i+1, g, w)
			}
		}
	}
}

func sampleIndex() IndexData {
	at := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	return IndexData{
		Now: at,
		Jobs: []JobView{
			{Name: "nightly-api", Schedule: "0 2 * * *", Next: at.Add(19 * time.Hour), LastVerdict: "leak", LastRunID: 2},
			{Name: "static-pages", Schedule: "@weekly", Next: at.Add(72 * time.Hour), LastVerdict: "clean", LastRunID: 1, Running: true},
			{Name: "new-job", Schedule: "@daily"},
		},
		Runs: []RunView{
			{ID: 3, Job: "static-pages", Status: "running", Verdict: "inconclusive", Started: at.Add(-time.Minute), Duration: time.Minute, Requests: 1200},
			{ID: 2, Job: "nightly-api", Status: "completed", Verdict: "leak", Started: at.Add(-5 * time.Hour), Duration: time.Minute, Requests: 12000, RSSPerRequest: 2134.3},
			{ID: 1, Job: "static-pages", Status: "completed", Verdict: "clean", Started: at.Add(-24 * time.Hour), Duration: 40 * time.Second, Requests: 8000, RSSPerRequest: 1.5},
		},
	}
}

func TestGolden(t *testing.T) {
	run1, run2 := loadRun(t, "testdata/run1"), loadRun(t, "testdata/run2")
	pages := []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"run1.html", func(b *bytes.Buffer) error {
			return RunReport(b, run1, PageOptions{Job: "nightly-api", RunID: 2, Links: []Link{{"All runs", "/"}}})
		}},
		{"run1-live.html", func(b *bytes.Buffer) error {
			return RunReport(b, run1, PageOptions{Title: "nightly-api (running)", Live: true, RefreshSeconds: 3, RunID: 2})
		}},
		{"run2.html", func(b *bytes.Buffer) error { return RunReport(b, run2, PageOptions{}) }},
		{"index.html", func(b *bytes.Buffer) error { return Index(b, sampleIndex()) }},
		{"compare.html", func(b *bytes.Buffer) error {
			ix := sampleIndex()
			return Compare(b, run1, run2, ix.Runs[1], ix.Runs[2], judged(run1, run2))
		}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := p.render(&b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, p.name, outline(b.String()))
		})
	}
}
