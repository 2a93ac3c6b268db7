// Package config reads soakd's daemon configuration: a YAML file decoded
// strictly (an unknown field is an error) and validated in full at load, so
// that the daemon never fails later on something the file could have told.
// Every error names the file, the line and the field path, and says what
// is allowed:
//
//	soakd.yaml:14: jobs[2].load.rate: must be >= 0, got -5
//
// Relative paths in the file (state_dir, token_file, targets_file, a body
// @FILE, pidfile, exec_log) are relative to the file's directory.
package config

import (
	"fmt"
	"os"
	"time"

	_ "time/tzdata" // job timezones work on hosts without /usr/share/zoneinfo

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/sweep"
	"github.com/soakd/soakd/soak/urlx"
)

// Defaults of the daemon's settings.
const (
	// DefaultListen is the API's address. Port 7797 lies outside the
	// 9100-9999 range of the Prometheus wiki's "Default port allocations"
	// (full since 2023) and outside its 9090-9093 server ports and the
	// 10000+ overflow, so soakd collides with no registered exporter.
	DefaultListen          = "127.0.0.1:7797"
	DefaultStateDir        = "/var/lib/soakd"
	DefaultLogLevel        = "info"
	DefaultMaxAge          = 720 * time.Hour
	DefaultMaxRunsPerJob   = 200
	DefaultSchedulingSlack = 5 * time.Minute // added to a derived max_duration
)

// Config is the whole daemon configuration.
type Config struct {
	Listen   string `yaml:"listen"`
	StateDir string `yaml:"state_dir"`
	// BearerToken is the "token" field; use Token() to read the effective
	// token, which may come from TokenFile.
	BearerToken urlx.Secret `yaml:"token"`
	TokenFile   string      `yaml:"token_file"`
	// Auth says which calls need the token: AuthWrites (those that change
	// anything) or AuthAll (reads too: the API, the pages, /metrics; only
	// /healthz and /readyz stay open). Empty means AuthAll when Listen is
	// not on loopback, else AuthWrites; see EffectiveAuth.
	Auth string `yaml:"auth"`
	// ExternalURL is the base of links in alerts; default http://<listen>.
	// It also fills Alerts.ExternalURL when that is empty.
	ExternalURL string        `yaml:"external_url"`
	LogLevel    string        `yaml:"log_level"`
	Retention   Retention     `yaml:"retention"`
	Alerts      alerts.Config `yaml:"alerts"`
	Jobs        []Job         `yaml:"jobs"`

	// Path is the file the config came from.
	Path string `yaml:"-"`
}

// Values of Config.Auth.
const (
	AuthWrites = "writes"
	AuthAll    = "all"
)

// EffectiveAuth returns Auth, or its default for the listen address.
func (c *Config) EffectiveAuth() string {
	if c.Auth != "" {
		return c.Auth
	}
	if c.ListenIsLoopback() {
		return AuthWrites
	}
	return AuthAll
}

// Retention bounds the store: runs older than MaxAge, and runs beyond the
// newest MaxRunsPerJob of each job, are deleted. Zero keeps all.
type Retention struct {
	MaxAge        time.Duration `yaml:"max_age"`
	MaxRunsPerJob int           `yaml:"max_runs_per_job"`
}

// Job is one soak, run on its schedule and on request.
type Job struct {
	Name string `yaml:"name"`
	// Schedule is five cron fields, @daily or @every 6h; a job without
	// one runs only on request (the API, the web page's button,
	// `soakd run --daemon`).
	Schedule string `yaml:"schedule"`
	Timezone string `yaml:"timezone"` // IANA name; "" or "Local" = the host's
	// MaxDuration caps the whole run, baseline and cool-down included.
	// After Load it is always set: when the file leaves it out it is
	// phases.baseline + load.duration + phases.cooldown +
	// target.ready_timeout + 5m.
	MaxDuration time.Duration `yaml:"max_duration"`
	Alerts      []string      `yaml:"alerts"` // sink names from alerts.sinks

	// Spec is what `soakd run`'s flags say: target, load, sampling,
	// phases and thresholds, with the same defaults and the same checks.
	runner.Spec `yaml:",inline"`

	// Kind is "soak" (the default, also "") or "sweep": a ladder of
	// concurrencies (Sweep) against the same target and URL, whose
	// report is kept beside the job's earlier sweeps and compared with
	// the last (`soakd sweep`).
	Kind  string     `yaml:"kind"`
	Sweep sweep.Spec `yaml:"sweep"`
}

// Job kinds.
const (
	KindSoak  = "soak"
	KindSweep = "sweep"
)

// IsSweep tells whether the job is a sweep.
func (j *Job) IsSweep() bool { return j.Kind == KindSweep }

// Default returns a Config with every default set and no jobs.
func Default() Config {
	return Config{
		Listen:    DefaultListen,
		StateDir:  DefaultStateDir,
		LogLevel:  DefaultLogLevel,
		Retention: Retention{MaxAge: DefaultMaxAge, MaxRunsPerJob: DefaultMaxRunsPerJob},
		Alerts:    alerts.DefaultConfig(),
	}
}

// DefaultJob returns a Job with every default set: runner.DefaultSpec,
// the defaults of `soakd run`'s flags.
func DefaultJob() Job {
	return Job{Spec: runner.DefaultSpec(), Sweep: sweep.DefaultSpec()}
}

// Load reads, parses and validates the config file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Job returns the job named name, or nil.
func (c *Config) Job(name string) *Job {
	for i := range c.Jobs {
		if c.Jobs[i].Name == name {
			return &c.Jobs[i]
		}
	}
	return nil
}
