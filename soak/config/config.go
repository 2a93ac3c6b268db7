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
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak"
	"github.com/soakd/soakd/soak/verdict"
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
	BearerToken string `yaml:"token"`
	TokenFile   string `yaml:"token_file"`
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

// Retention bounds the store: runs older than MaxAge, and runs beyond the
// newest MaxRunsPerJob of each job, are deleted. Zero keeps all.
type Retention struct {
	MaxAge        time.Duration `yaml:"max_age"`
	MaxRunsPerJob int           `yaml:"max_runs_per_job"`
}

// Job is one scheduled soak.
type Job struct {
	Name     string `yaml:"name"`
	Schedule string `yaml:"schedule"` // five cron fields, @daily, @every 6h
	Timezone string `yaml:"timezone"` // IANA name; "" or "Local" = the host's
	// MaxDuration caps the whole run, baseline and cool-down included.
	// After Load it is always set: when the file leaves it out it is
	// phases.baseline + load.duration + phases.cooldown +
	// target.ready_timeout + 5m.
	MaxDuration time.Duration `yaml:"max_duration"`
	Alerts      []string      `yaml:"alerts"` // sink names from alerts.sinks

	Target     TargetConfig     `yaml:"target"`
	Load       LoadConfig       `yaml:"load"`
	Sampling   SamplingConfig   `yaml:"sampling"`
	Phases     PhasesConfig     `yaml:"phases"`
	Thresholds ThresholdsConfig `yaml:"thresholds"`
}

// TargetConfig says which process tree a job samples, as `soakd run`'s target
// flags do. At most one of PID, PIDFile, Match, Unit and Exec is set; with
// none, the owner of the load URL's port is looked up.
type TargetConfig struct {
	PID          int           `yaml:"pid"`
	PIDFile      string        `yaml:"pidfile"`
	Match        string        `yaml:"match"`
	Unit         string        `yaml:"unit"`
	Exec         string        `yaml:"exec"`
	ExecLog      string        `yaml:"exec_log"`
	ExecShow     bool          `yaml:"exec_show"`
	ReadyTimeout time.Duration `yaml:"ready_timeout"`
	StopGrace    time.Duration `yaml:"stop_grace"`
	NoProbe      bool          `yaml:"no_probe"`
	// Remote samples the target through its metrics instead of /proc:
	// its own endpoint (metrics_url) or a Prometheus server's series
	// (prometheus_url with a selector), as `soakd run --probe-*`.
	Remote remote.Config `yaml:"remote"`
}

// LoadConfig is a job's HTTP load, as `soakd run`'s load flags.
type LoadConfig struct {
	URL          string        `yaml:"url"`
	TargetsFile  string        `yaml:"targets_file"`
	Method       string        `yaml:"method"`
	Headers      []string      `yaml:"headers"`
	Body         string        `yaml:"body"` // a STRING, or @FILE
	ContentType  string        `yaml:"content_type"`
	Concurrency  int           `yaml:"concurrency"`
	Rate         float64       `yaml:"rate"`
	Requests     uint64        `yaml:"requests"`
	Duration     time.Duration `yaml:"duration"`
	KeepAlive    bool          `yaml:"keepalive"`
	Timeout      time.Duration `yaml:"timeout"`
	Insecure     bool          `yaml:"insecure"`
	ExpectStatus []string      `yaml:"expect_status"`
	ExpectBody   string        `yaml:"expect_body"`
	CheckLength  bool          `yaml:"check_length"`
}

// SamplingConfig is the cadence of the target's samples.
type SamplingConfig struct {
	Interval      time.Duration `yaml:"interval"` // 0 = paced to the run
	Smaps         bool          `yaml:"smaps"`    // false: never read smaps_rollup
	SmapsInterval time.Duration `yaml:"smaps_interval"`
	TopN          int           `yaml:"top_n"` // per-process breakdown size
}

// PhasesConfig are the idle baseline before the load, the warm-up
// (excluded from the fits) and the cool-down.
type PhasesConfig struct {
	Baseline time.Duration `yaml:"baseline"` // 0 skips it
	Warmup   string        `yaml:"warmup"`   // N requests, 30s, 10%, or 0
	Cooldown time.Duration `yaml:"cooldown"`
}

// ThresholdsConfig are the verdict thresholds, as `soakd run`'s flags.
type ThresholdsConfig struct {
	Alpha               float64 `yaml:"alpha"`
	LeakBytesPerRequest float64 `yaml:"leak_bytes_per_request"`
	LeakMinGrowth       string  `yaml:"leak_min_growth"` // a size, e.g. 1MiB
	LeakFDsPerRequest   float64 `yaml:"leak_fds_per_request"`
	MemLimit            string  `yaml:"mem_limit"` // a size; "" = the cgroup's memory.max
	// The horizon floors: growth projected over LeakHorizon at the
	// observed throughput that makes a leak (LeakHorizonGrowth of memory,
	// LeakHorizonFDs fds, or LeakLimitShare of the limit), and reaching
	// a limit within ExhaustionWithin.
	LeakHorizon       time.Duration `yaml:"leak_horizon"`
	LeakHorizonGrowth string        `yaml:"leak_horizon_growth"` // a size, e.g. 64MiB
	LeakHorizonFDs    float64       `yaml:"leak_horizon_fds"`
	LeakLimitShare    float64       `yaml:"leak_limit_share"`
	ExhaustionWithin  time.Duration `yaml:"exhaustion_within"`
}

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

// DefaultJob returns a Job with every default set: the same defaults as
// `soakd run`'s flags.
func DefaultJob() Job {
	mem, fds := verdict.MemoryThresholds, verdict.FDThresholds
	return Job{
		Target: TargetConfig{ReadyTimeout: 10 * time.Second, StopGrace: 5 * time.Second},
		Load: LoadConfig{
			Method: "GET", Concurrency: 1, KeepAlive: true, Timeout: 30 * time.Second,
		},
		Sampling: SamplingConfig{Smaps: true, SmapsInterval: 30 * time.Second, TopN: 5},
		Phases:   PhasesConfig{Baseline: soak.DefaultBaseline, Warmup: "10%"},
		Thresholds: ThresholdsConfig{Alpha: mem.Alpha, LeakBytesPerRequest: mem.MinPerRequest, LeakMinGrowth: "1MiB",
			LeakFDsPerRequest: fds.MinPerRequest,
			LeakHorizon:       seconds(mem.Horizon), LeakHorizonGrowth: "64MiB", LeakHorizonFDs: fds.HorizonGrowth,
			LeakLimitShare: mem.HorizonLimitShare, ExhaustionWithin: seconds(mem.Exhaustion)},
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

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
