package load

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseTargetsFile reads endpoints from path, one per line:
//
//	[weight] METHOD URL [@bodyfile]
//
// Blank lines and lines starting with # are skipped. A body file is read
// relative to the targets file's directory. Errors name FILE:LINE.
func ParseTargetsFile(path string) ([]Endpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load: targets file: %w", err)
	}
	defer f.Close()
	var eps []Endpoint
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ep, err := parseTargetLine(line, filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		eps = append(eps, ep)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load: targets file %s: %w", path, err)
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("%s: no targets: add lines like \"GET http://127.0.0.1:8080/\"", path)
	}
	return eps, nil
}

// parseTargetLine parses "[weight] METHOD URL [@bodyfile]".
func parseTargetLine(line, dir string) (Endpoint, error) {
	fields := strings.Fields(line)
	ep := Endpoint{Weight: 1}
	if w, err := strconv.Atoi(fields[0]); err == nil {
		if w <= 0 {
			return ep, fmt.Errorf("weight %d: must be a positive integer", w)
		}
		ep.Weight = w
		fields = fields[1:]
	}
	if len(fields) < 2 || len(fields) > 3 {
		return ep, fmt.Errorf("%q: want \"[weight] METHOD URL [@bodyfile]\"", line)
	}
	ep.Method, ep.URL = strings.ToUpper(fields[0]), fields[1]
	if _, err := parseTarget(ep.URL); err != nil {
		return ep, fmt.Errorf("url %w", err)
	}
	if len(fields) == 3 {
		if !strings.HasPrefix(fields[2], "@") {
			return ep, fmt.Errorf("%q: a body must be a file written @FILE", fields[2])
		}
		name := fields[2][1:]
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return ep, fmt.Errorf("body file (relative to the targets file): %w", err)
		}
		ep.Body = b
	}
	return ep, nil
}

// ParseHeader parses "Name: value" as given to a -H flag.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return Header{}, fmt.Errorf("load: header %q: want \"Name: value\"", s)
	}
	h := Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
	if err := checkHeader(h); err != nil {
		return Header{}, fmt.Errorf("load: header %q: %w", s, err)
	}
	return h, nil
}

// ParseBody returns s itself, or with "@FILE" the contents of FILE.
func ParseBody(s string) ([]byte, error) {
	name, ok := strings.CutPrefix(s, "@")
	if !ok {
		return []byte(s), nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("load: body: %w", err)
	}
	return b, nil
}
