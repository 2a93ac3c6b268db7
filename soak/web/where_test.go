package web

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// The run page shows the growing mappings and sites, and links every kept
// snapshot for download, beside report.html or under the daemon's API.
func TestReportShowsWhereAndLinksTheEvidence(t *testing.T) {
	rep := loadRun(t, filepath.Join("testdata", "run1"))
	rss := rep.Resources["rss"]
	rss.Mappings = []verdict.Mapping{{Name: "[heap]", GrowthBytes: 88 << 20, Share: 0.92}}
	rss.Sites = []verdict.Site{{Site: "main.leak (main.go:42)", Kind: "go-heap", PerRequest: 100, ObjectsPerRequest: 1, GrowthBytes: 1 << 20, Share: 1}}
	rep.Resources["rss"] = rss
	rep.Where = &model.Where{Notes: []string{"found a Go heap profile"}, Evidence: []model.EvidenceFile{
		{Name: "heap-end.pb.gz", Kind: "go-heap", Bytes: 2048},
		{Name: "big.pb.gz", Kind: "go-heap", CutFromBytes: 9 << 20},
	}}
	for _, tc := range []struct{ base, link string }{
		{"", `href="evidence/heap-end.pb.gz"`},
		{"/api/v1/runs/7/evidence/", `href="/api/v1/runs/7/evidence/heap-end.pb.gz"`},
	} {
		var b strings.Builder
		if err := RunReport(&b, rep, PageOptions{EvidenceBase: tc.base}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range []string{
			`<h3 id="where">Where the growth lives</h3>`,
			`<td><code>[heap]</code></td><td class="num">&#43;88 MiB</td><td class="num">92 %</td>`,
			`<td><code>main.leak (main.go:42)</code></td><td class="num">100 B</td>`,
			tc.link,
			`<th scope="row">big.pb.gz</th><td>go-heap</td><td class="num">0 B (cut from 9 MiB)</td>`,
			"found a Go heap profile",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("base %q: the page lacks %s", tc.base, want)
			}
		}
	}
}
