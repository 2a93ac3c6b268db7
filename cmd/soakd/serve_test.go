package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const serveTestJob = "jobs:\n  - name: web\n    schedule: '@daily'\n    load: {url: 'http://127.0.0.1:8080/', duration: 1h}\n"

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "soakd.yaml")
	writeFile(t, path, "listen: 127.0.0.1:7000\nstate_dir: /tmp/x\nlog_level: warn\n"+serveTestJob)
	tests := []struct {
		name                     string
		args                     []string
		listen, stateDir, logLvl string
	}{
		{"config values", []string{"--config", path}, "127.0.0.1:7000", "/tmp/x", "warn"},
		{"flags override", []string{"--config", path, "--listen", "127.0.0.1:0", "--state-dir", dir, "--log-level", "debug"},
			"127.0.0.1:0", dir, "debug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseServe(tt.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := f.load()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Listen != tt.listen || cfg.StateDir != tt.stateDir || cfg.LogLevel != tt.logLvl {
				t.Errorf("listen %q, state_dir %q, log_level %q; want %q, %q, %q",
					cfg.Listen, cfg.StateDir, cfg.LogLevel, tt.listen, tt.stateDir, tt.logLvl)
			}
		})
	}
}

func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "jobs:\n  - name: web\n    schedul: '@daily'\n")
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, serveTestJob)
	tests := []struct {
		name       string
		args       []string
		code       int
		stderrPart string
	}{
		{"bad config", []string{"--config", bad}, exitUsage, `unknown field "schedul"`},
		{"missing config", []string{"--config", filepath.Join(dir, "none.yaml")}, exitUsage, "no such file"},
		{"open listener without token", []string{"--config", good, "--listen", "0.0.0.0:0", "--state-dir", dir}, exitUsage, "loopback"},
		{"bad log level", []string{"--config", good, "--log-level", "loud"}, exitUsage, "--log-level"},
		{"stray argument", []string{"--config", good, "extra"}, exitUsage, "unexpected arguments"},
		{"help", []string{"--help"}, exitOK, "Usage: soakd serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := cmdServe(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit code %d; want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderrPart) {
				t.Errorf("stderr %q; want it to contain %q", stderr.String(), tt.stderrPart)
			}
			// Every refusal is one plain line, never a JSON log line.
			if strings.Contains(stderr.String(), `{"level"`) {
				t.Errorf("stderr %q: a JSON log line; want the refusal in plain text", stderr.String())
			}
		})
	}
}

func TestAlertTest(t *testing.T) {
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	sinks := func(extra string) string {
		return "alerts:\n  sinks:\n    - name: hook\n      type: webhook\n      url: " + srv.URL + "\n" + extra + serveTestJob
	}
	ok := filepath.Join(dir, "ok.yaml")
	writeFile(t, ok, sinks(""))
	failing := filepath.Join(dir, "failing.yaml")
	writeFile(t, failing, sinks("    - name: down\n      type: webhook\n      url: http://127.0.0.1:1/\n      timeout: 2s\n"))
	none := filepath.Join(dir, "none.yaml")
	writeFile(t, none, serveTestJob)
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"delivered", []string{"test", "--config", ok}, exitOK, "hook", ""},
		{"one sink fails", []string{"test", "--config", failing}, 1, "FAILED", ""},
		{"no sinks", []string{"test", "--config", none}, exitUsage, "", "no alert sinks"},
		{"no subcommand", []string{"--config", ok}, exitUsage, "", "soakd alert test"},
		{"help", []string{"--help"}, exitOK, "", "Usage: soakd alert test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := cmdAlert(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit code %d; want %d (stdout %q, stderr %q)", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q, stderr %q; want them to contain %q and %q", stdout.String(), stderr.String(), tt.stdout, tt.stderr)
			}
		})
	}
	if got.Load() != 2 {
		t.Errorf("the receiver got %d test alerts; want 2", got.Load())
	}
}
