package study

import (
	"bytes"
	"testing"
)

// TestLateStarts logs the late-start designs' verdicts and the trendless
// series' stable share (docs/verdict-study.md, "A leak that starts
// late").
func TestLateStarts(t *testing.T) {
	n := 200
	if raceBuild {
		n = 4 // the mechanics only
	}
	for _, d := range LateDesigns() {
		r := RunSlow(d, n, 1)
		t.Logf("%s: leak %d, stable %d, plateau %d, inconclusive %d of %d", d.Name(), r.Leak, r.Stable, r.Plateau, r.Inconclusive, r.N)
	}
	var buf bytes.Buffer
	stable, all := WriteFlatStable(&buf, FlatStable(n, 1))
	t.Logf("trendless series read stable: %d of %d\n%s", stable, all, buf.String())
}
