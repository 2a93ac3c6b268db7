package urlx_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestURLsEnterThroughUrlx walks the module's source (tests and testdata
// aside) for URL handling outside this package: net/url's parsers, and
// scheme checks by hand ("http"/"https" against a URL's Scheme, or a
// prefix test on "http://"). Each must go through urlx, so that every
// setting checks a URL by one rule and hides its secrets the same way.
func TestURLsEnterThroughUrlx(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "vendor", "node_modules":
				return filepath.SkipDir
			}
			if rel == filepath.Join("soak", "urlx") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		n++
		for _, f := range handMadeURLs(t, path) {
			found = append(found, rel+":"+f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("walked %d Go files under %s: the walk missed the module", n, root)
	}
	for _, f := range found {
		t.Errorf("%s: parse and check URLs with soak/urlx (Parse, ParseAddr, RequestURI, WithQuery)", f)
	}
}

// handMadeURLs lists the lines of path that parse a URL with net/url or
// check a scheme by hand.
func handMadeURLs(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	urlName := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "net/url" {
			urlName = "url"
			if im.Name != nil {
				urlName = im.Name.Name
			}
		}
	}
	var out []string
	at := func(n ast.Node, what string) {
		out = append(out, strconv.Itoa(fset.Position(n.Pos()).Line)+": "+what)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch e := n.(type) {
		case *ast.CallExpr:
			sel, ok := e.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, _ := sel.X.(*ast.Ident)
			if pkg != nil && urlName != "" && pkg.Name == urlName && (sel.Sel.Name == "Parse" || sel.Sel.Name == "ParseRequestURI") {
				at(e, "url."+sel.Sel.Name)
			}
			if pkg != nil && pkg.Name == "strings" && strings.Contains(sel.Sel.Name, "Prefix") {
				for _, a := range e.Args {
					if s := stringLit(a); s == "http://" || s == "https://" {
						at(e, "strings."+sel.Sel.Name+" on "+strconv.Quote(s))
					}
				}
			}
		case *ast.BinaryExpr:
			if e.Op != token.EQL && e.Op != token.NEQ {
				return true
			}
			for _, pair := range [][2]ast.Expr{{e.X, e.Y}, {e.Y, e.X}} {
				s := stringLit(pair[0])
				sel, ok := pair[1].(*ast.SelectorExpr)
				if (s == "http" || s == "https") && ok && sel.Sel.Name == "Scheme" {
					at(e, "a scheme compared with "+strconv.Quote(s))
				}
			}
		}
		return true
	})
	return out
}

func stringLit(e ast.Expr) string {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return ""
	}
	s, _ := strconv.Unquote(b.Value)
	return s
}
