package config

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/sweep"
	"github.com/soakd/soakd/soak/urlx"
)

// Options turns the job into a run's options, as `soakd run` turns its
// flags (runner.Spec.Options). The daemon adds Log, OnRecord, OutDir and
// the like. It reads the targets file and a body @FILE, so call it for
// each run to pick up their current content. A sweep's are the base of
// its levels (SweepOptions).
func (j *Job) Options() (runner.Options, error) {
	if j.IsSweep() {
		so, err := j.SweepOptions()
		return so.Run, err
	}
	o, err := j.Spec.Options()
	if err != nil {
		return o, fmt.Errorf("job %s: %w", j.Name, err)
	}
	return o, nil
}

// SweepOptions turns a sweep job into a sweep's options, as `soakd
// sweep` turns its flags.
func (j *Job) SweepOptions() (sweep.Options, error) {
	o, err := j.Sweep.Options(j.Spec)
	if err != nil {
		return o, fmt.Errorf("job %s: %w", j.Name, err)
	}
	return o, nil
}

// Token returns the bearer token: token, or the content of token_file
// (surrounding white space trimmed). "" means none is set.
func (c *Config) Token() (urlx.Secret, error) {
	if c.BearerToken != "" || c.TokenFile == "" {
		return c.BearerToken, nil
	}
	b, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return "", fmt.Errorf("token_file: %w", err)
	}
	tok := urlx.Secret(strings.TrimSpace(string(b)))
	if tok == "" {
		return "", fmt.Errorf("token_file %s: empty", c.TokenFile)
	}
	return tok, nil
}

// ListenIsLoopback reports whether listen binds to loopback only:
// localhost, 127.0.0.0/8 or ::1.
func (c *Config) ListenIsLoopback() bool {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
