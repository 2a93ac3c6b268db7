package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	for path, text := range map[string]string{
		good: "jobs:\n  - name: web\n    schedule: '@daily'\n    load: {url: 'http://127.0.0.1:8080/', duration: 1h}\n",
		bad:  "jobs:\n  - name: web\n    schedul: '@daily'\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // a prefix
		stderrPart string // "" = stderr must be empty
	}{
		{"valid", []string{good}, exitOK, good + ": ok, 1 job\n  web ", ""},
		{"quiet", []string{"-q", good}, exitOK, good + ": ok, 1 job\n", ""},
		{"example", []string{"../../configs/soakd.yaml"}, exitOK, "../../configs/soakd.yaml: ok, 4 jobs\n", ""},
		{"unknown field", []string{bad}, exitUsage, "", bad + `:3: jobs[0]: unknown field "schedul"`},
		{"missing file", []string{filepath.Join(dir, "none.yaml")}, exitUsage, "", "no such file"},
		{"no file", nil, exitUsage, "", "want one FILE"},
		{"help", []string{"--help"}, exitOK, "", "Usage: soakd check-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cmdCheckConfig(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d; want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.stdout) || (tt.stdout == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q; want it to start with %q", stdout.String(), tt.stdout)
			}
			switch {
			case tt.stderrPart == "" && stderr.Len() > 0:
				t.Errorf("stderr %q; want it empty", stderr.String())
			case !strings.Contains(stderr.String(), tt.stderrPart):
				t.Errorf("stderr %q; want it to contain %q", stderr.String(), tt.stderrPart)
			}
		})
	}
}

// TestCheckConfigWarns: check-config accepts, with a warning on stderr, a
// listener off loopback without external_url, and a job whose soak is
// shorter than thresholds.transient; it says nothing of a config that
// sets both right.
func TestCheckConfigWarns(t *testing.T) {
	dir := t.TempDir()
	job := func(duration, warmup string) string {
		return "jobs:\n  - name: web\n    schedule: '@daily'\n    load: {url: 'http://127.0.0.1:8080/', duration: " + duration + "}\n" +
			"    phases: {warmup: '" + warmup + "'}\n"
	}
	open := "listen: 0.0.0.0:7797\ntoken: s3cret-s3cret-s3cret-s3cret\n"
	tests := []struct {
		name, text string
		want       []string // parts of stderr; none: stderr empty
	}{
		{"all fine", job("1h", "10%"), nil},
		{"short soak", job("5m", "10%"), []string{"jobs[web]: its soak lasts about 4m30s (load.duration 5m0s less the 10% warm-up), shorter than thresholds.transient (10m0s)"}},
		{"short soak, timed warm-up", job("11m", "2m"), []string{"about 9m0s (load.duration 11m0s less the 2m0s warm-up)"}},
		{"open listener, no external_url", open + job("1h", "10%"), []string{"external_url is unset and listen 0.0.0.0:7797 is not loopback"}},
		{"open listener with external_url", open + "external_url: https://soak.example.com/\n" + job("1h", "10%"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := cmdCheckConfig([]string{"-q", path}, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit code %d; want %d (stderr %q)", code, exitOK, stderr.String())
			}
			if len(tt.want) == 0 && stderr.Len() > 0 {
				t.Errorf("stderr %q; want it empty", stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), path+": warning: ") || !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q; want a warning containing %q", stderr.String(), w)
				}
			}
		})
	}
}
