package verdict

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

// verdictConst names the constants that are verdict words: a resource's
// (Leak, Stable, Plateau, Inconclusive), the requests' (Health…) and the
// run's (Overall…).
var verdictConst = regexp.MustCompile(`^(Leak|Stable|Plateau|Inconclusive|Health[A-Z]\w*|Overall[A-Z]\w*)$`)

// TestWordsTable: every verdict word declared in this package has a row
// in Words, and the rows agree with themselves.
func TestWordsTable(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range pkgs {
		for name, f := range p.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if !verdictConst.MatchString(id.Name) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						word, _ := strconv.Unquote(lit.Value)
						seen++
						if _, ok := WordOf(word); !ok {
							t.Errorf("%s: the verdict word %s = %q has no row in Words", name, id.Name, word)
						}
					}
				}
			}
		}
	}
	if seen < 8 {
		t.Errorf("found %d verdict constants; want the 8 or more this package declares", seen)
	}
	for _, w := range Words {
		if w.Settled && !w.Decided {
			t.Errorf("%s: settled but not decided", w.Name)
		}
		if w.Finding != (w.Tone == ToneBad) {
			t.Errorf("%s: a finding reads bad, and only a finding (tone %s, finding %v)", w.Name, w.Tone, w.Finding)
		}
		if w.Icon == "" {
			t.Errorf("%s: no icon (colour must not be the only cue)", w.Name)
		}
	}
	for v, want := range map[string]bool{Stable: true, Plateau: true, Leak: false, Inconclusive: false, "": false} {
		if Settled(v) != want {
			t.Errorf("Settled(%q) = %v; want %v", v, !want, want)
		}
	}
}
