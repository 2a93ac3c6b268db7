package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseErrors: any config file parses or fails the same way twice,
// and every error it gives names the file and a line of it (or none).
func FuzzParseErrors(f *testing.F) {
	f.Add([]byte(job("    target: {pid: 1}\n    phases: {warmup: 10%}\n")))
	f.Add([]byte("jobs:\n  - name: a\n    target: {pid: 1}\n  - name: a\n    target: {port: 99999}\n"))
	f.Add([]byte("listen: [\n"))
	for _, dir := range []string{"testdata/bad", "testdata/good"} {
		files, _ := filepath.Glob(dir + "/*.yaml")
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil && len(b) < 2048 {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("fuzz.yaml", data)
		_, again := Parse("fuzz.yaml", data)
		if (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("%q: parsed twice, got %v and then %v", data, err, again)
		}
		if err == nil {
			return
		}
		lines := yamlLines(data)
		errs := configErrors(err)
		if len(errs) == 0 {
			t.Fatalf("%q: error %v is no config error", data, err)
		}
		for _, e := range errs {
			if e.File != "fuzz.yaml" || e.Line < 0 || e.Line > lines+1 {
				t.Fatalf("%q (%d lines): error %q at line %d of %q", data, lines, e.Msg, e.Line, e.File)
			}
		}
	})
}

// yamlLines counts data's lines as YAML does: CR LF, CR, LF, NEL, LS and
// PS each end one.
func yamlLines(data []byte) int {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	n := 1
	for _, brk := range []string{"\r", "\n", "\u0085", "\u2028", "\u2029"} {
		n += bytes.Count(data, []byte(brk))
	}
	return n
}

// configErrors returns the *Error values in err's tree.
func configErrors(err error) []*Error {
	var e *Error
	if errors.As(err, &e) && err == error(e) {
		return []*Error{e}
	}
	var out []*Error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, x := range j.Unwrap() {
			out = append(out, configErrors(x)...)
		}
	}
	return out
}
