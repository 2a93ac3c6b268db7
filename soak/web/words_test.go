package web

import (
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestBadgesReadTheWordsTable: a verdict word's badge is its row's tone
// and icon, so that a new word needs no case here.
func TestBadgesReadTheWordsTable(t *testing.T) {
	for _, w := range verdict.Words {
		if b := badgeOf(w.Name); b.Class != string(w.Tone) || b.Icon != w.Icon || b.Word != w.Name {
			t.Errorf("badgeOf(%q) = %+v; want class %s, icon %s", w.Name, b, w.Tone, w.Icon)
		}
	}
}
