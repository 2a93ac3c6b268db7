package web

import (
	"github.com/soakd/soakd/soak/model"

	"bytes"
	"regexp"
	"strings"
	"testing"
)

const (
	evilScript = `<script>alert(1)</script>`
	evilImg    = `"><img src=x onerror=alert(2)>`
	evil       = evilScript + evilImg
)

// evilReport is a fixture run whose target command line and reasons are
// full of HTML.
func evilReport(t *testing.T) *model.Report {
	rep := loadRun(t, "testdata/run1")
	rep.Target.Description = "pid 1 (/srv/app --name " + evil + ")"
	res := rep.Resources["rss"]
	res.Reason = "rss grows " + evil
	res.Settle = evil
	rep.Resources["rss"] = res
	rep.Resources[evil] = res
	rep.CPU.Reason = evil
	rep.Load.ErrorsByCause = map[string]uint64{evil: 3}
	return rep
}

func TestEscaping(t *testing.T) {
	rep := evilReport(t)
	ix := sampleIndex()
	for i := range ix.Jobs {
		ix.Jobs[i].Name, ix.Jobs[i].Schedule = evil, evil
	}
	for i := range ix.Runs {
		ix.Runs[i].Job, ix.Runs[i].Status, ix.Runs[i].Verdict = evil, evil, evil
	}
	ix.Title = evil
	opt := PageOptions{Title: evil, Job: evil, Live: true, Links: []Link{{evil, "javascript:alert(3)"}}}
	pages := []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"run", func(b *bytes.Buffer) error { return RunReport(b, rep, opt) }},
		{"index", func(b *bytes.Buffer) error { return Index(b, ix) }},
		{"compare", func(b *bytes.Buffer) error { return Compare(b, rep, rep, ix.Runs[0], ix.Runs[1], judged(rep, rep)) }},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := p.render(&b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, bad := range []string{"<script", "<img", "javascript:"} {
				if i := strings.Index(page, bad); i >= 0 {
					t.Errorf("page holds %q unescaped: …%s…", bad, page[max(i-80, 0):min(i+80, len(page))])
				}
			}
			if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Errorf("page lacks the escaped job name or command line &lt;script&gt;…")
			}
		})
	}
}

// TestSelfContained checks that no page refers to anything outside it: no
// src attributes, no absolute URLs in href, no CSS imports or url().
func TestSelfContained(t *testing.T) {
	rep := loadRun(t, "testdata/run1")
	var b bytes.Buffer
	if err := RunReport(&b, rep, PageOptions{Links: []Link{{"All runs", "/"}}}); err != nil {
		t.Fatal(err)
	}
	if err := Index(&b, sampleIndex()); err != nil {
		t.Fatal(err)
	}
	external := regexp.MustCompile(`(?i)\bsrc=|href="(https?:)?//|@import|url\(|<link\b|<script\b`)
	page := svgNamespaces.ReplaceAllString(b.String(), "")
	page = strings.ReplaceAll(page, `<link rel="icon" href="data:,">`, "") // no favicon request
	if m := external.FindString(page); m != "" {
		t.Errorf("page refers outside itself: %q", m)
	}
}

var svgNamespaces = regexp.MustCompile(`xmlns(:xlink)?="[^"]*"`)

func TestEmptyPages(t *testing.T) {
	tests := []struct {
		name   string
		render func(*bytes.Buffer) error
		want   string
	}{
		{"run without samples", func(b *bytes.Buffer) error {
			return RunReport(b, &model.Report{Verdict: "inconclusive"}, PageOptions{Live: true})
		}, "No samples yet."},
		{"load-only run", func(b *bytes.Buffer) error {
			rep := loadRun(t, "testdata/run1")
			rep.Target, rep.Resources = model.TargetInfo{}, nil
			return RunReport(b, rep, PageOptions{})
		}, "not sampled (load only)"},
		{"index without jobs or runs", func(b *bytes.Buffer) error { return Index(b, IndexData{}) }, "No runs yet."},
		{"compare without samples", func(b *bytes.Buffer) error {
			return Compare(b, &model.Report{}, &model.Report{}, RunView{ID: 1}, RunView{ID: 2}, judged(&model.Report{}, &model.Report{}))
		}, "Run #1 against run #2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("page lacks %q", tt.want)
			}
		})
	}
}
