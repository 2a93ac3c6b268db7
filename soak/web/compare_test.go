package web

import (
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
)

// TestRSSValueReadsTheTable: the compare chart draws only records whose RSS
// was read, as every other chart does; an alive record with an unread RSS
// (a zero) is no point at zero.
func TestRSSValueReadsTheTable(t *testing.T) {
	for _, tc := range []struct {
		s    probes.Sample
		want bool
	}{
		{probes.Sample{Alive: true, RSSValid: true, RSS: 4096}, true},
		{probes.Sample{Alive: true, RSSValid: false}, false},
		{probes.Sample{Alive: false}, false},
	} {
		if _, ok := rssValue(model.Record{Sample: tc.s}); ok != tc.want {
			t.Errorf("rssValue(alive %v, RSSValid %v) ok = %v, want %v", tc.s.Alive, tc.s.RSSValid, ok, tc.want)
		}
	}
}
