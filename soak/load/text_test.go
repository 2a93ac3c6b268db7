package load

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProgressLinesMatchSummary(t *testing.T) {
	ts := newTestServer(t, okHandler)
	var buf bytes.Buffer
	o := Options{Endpoints: endpoints(ts.URL), Requests: 500, KeepAlive: true,
		Interval: 20 * time.Millisecond}
	o.OnInterval = NewProgress(&buf, o.Requests)
	s := run(t, o)

	var tenths []uint64
	var last, lastErrs uint64
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var n uint64
		if _, err := fmt.Sscanf(line, "%d requests completed", &n); err == nil {
			tenths = append(tenths, n)
			continue
		}
		var secs, rate, ma, p50, p99 float64
		_, err := fmt.Sscanf(line, "[%fs] %d requests %f req/s (avg %f req/s) p50 %f ms p99 %f ms errors %d",
			&secs, &last, &rate, &ma, &p50, &p99, &lastErrs)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		lines++
	}
	if lines == 0 || last != s.Requests || lastErrs != s.Errors {
		t.Errorf("got %d lines ending at %d requests %d errors; want >0 lines ending at %d, %d", lines, last, lastErrs, s.Requests, s.Errors)
	}
	want := []uint64{50, 100, 150, 200, 250, 300, 350, 400, 450, 500}
	if fmt.Sprint(tenths) != fmt.Sprint(want) {
		t.Errorf("got completed marks %v; want %v", tenths, want)
	}
}

func TestIntervalsAddUp(t *testing.T) {
	ts := newTestServer(t, okHandler)
	var sum uint64
	var ivs int
	o := Options{Endpoints: endpoints(ts.URL), Requests: 300, KeepAlive: true,
		Interval: 10 * time.Millisecond, OnInterval: func(iv Interval) { sum += iv.Count; ivs++ }}
	s := run(t, o)
	if sum != s.Requests || ivs == 0 {
		t.Errorf("got intervals summing to %d over %d calls; want %d", sum, ivs, s.Requests)
	}
}

func TestWriteText(t *testing.T) {
	ts := newTestServer(t, okHandler)
	s := run(t, Options{Endpoints: endpoints(ts.URL), Requests: 200, Concurrency: 2, KeepAlive: true})
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Complete requests:      200\n",
		"Failed requests:        0\n",
		fmt.Sprintf("Requests per second:    %.2f [#/sec] (mean)\n", s.RPS),
		"Status classes:         2xx 200\n",
		"Errors by cause:        none\n",
		"99.9%",
		"(longest request)",
		"Connections opened:     2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if len(s.Percentiles) != 10 || s.Percentiles[9].Seconds != s.Latency.Max {
		t.Errorf("got percentiles %v; want 10 rows ending at max %v", s.Percentiles, s.Latency.Max)
	}
	if s.BytesIn == 0 || s.BytesOut == 0 {
		t.Errorf("got bytes in %d out %d; want both > 0", s.BytesIn, s.BytesOut)
	}
}

func TestParseTargetsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.txt"), []byte("a=b"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content string
		want    string // fmt of endpoints, or the error with FILE for the path
	}{
		{"good", "# comment\n\nGET http://127.0.0.1:8080/\n3 post http://127.0.0.1:8080/f @body.txt\n",
			"[{1 GET http://127.0.0.1:8080/ []} {3 POST http://127.0.0.1:8080/f [97 61 98]}]"},
		{"missing url", "GET\n", `FILE:1: "GET": want "[weight] METHOD URL [@bodyfile]"`},
		{"bad weight", "GET http://x/\n0 GET http://x/\n", "FILE:2: weight 0: must be a positive integer"},
		{"bad scheme", "GET ftp://x/\n", `FILE:1: url "ftp://x/": scheme "ftp" is not taken here: want an absolute http:// or https:// URL`},
		{"body without @", "POST http://x/ body.txt\n", `FILE:1: "body.txt": a body must be a file written @FILE`},
		{"missing body", "POST http://x/ @nope.txt\n", "FILE:1: body file (relative to the targets file): open DIR/nope.txt: no such file or directory"},
		{"empty", "# nothing\n", `FILE: no targets: add lines like "GET http://127.0.0.1:8080/"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "targets")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			eps, err := ParseTargetsFile(path)
			got := fmt.Sprint(eps)
			if err != nil {
				got = strings.ReplaceAll(strings.ReplaceAll(err.Error(), path, "FILE"), dir, "DIR")
			}
			if got != tt.want {
				t.Errorf("got %s; want %s", got, tt.want)
			}
		})
	}
}

func TestParseHeaderAndBody(t *testing.T) {
	h, err := ParseHeader("X-Token:  abc: d ")
	if err != nil || h != (Header{"X-Token", "abc: d"}) {
		t.Errorf("got %+v, %v; want X-Token abc: d", h, err)
	}
	if _, err := ParseHeader("novalue"); err == nil || err.Error() != `load: header "novalue": want "Name: value"` {
		t.Errorf("got %v; want the Name: value error", err)
	}
	path := filepath.Join(t.TempDir(), "b")
	if err := os.WriteFile(path, []byte("file body"), 0o600); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"plain": "plain", "@" + path: "file body"} {
		if b, err := ParseBody(in); err != nil || string(b) != want {
			t.Errorf("ParseBody(%q) = %q, %v; want %q", in, b, err, want)
		}
	}
}

// FuzzParseTargetLine checks that no line makes the parser panic.
func FuzzParseTargetLine(f *testing.F) {
	f.Add("3 POST http://127.0.0.1:8080/x @body")
	f.Add("GET")
	f.Fuzz(func(t *testing.T, line string) {
		if strings.TrimSpace(line) == "" {
			return
		}
		_, _ = parseTargetLine(strings.TrimSpace(line), t.TempDir())
	})
}
