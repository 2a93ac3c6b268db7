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
		{"example", []string{"../../configs/soakd.yaml"}, exitOK, "../../configs/soakd.yaml: ok, 3 jobs\n", ""},
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
