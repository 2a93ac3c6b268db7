package alerts

import (
	"fmt"
	"time"

	"github.com/soakd/soakd/soak/field"
)

// Sink types: the registry's keys (see SinkTypes).
const (
	TypeAlertmanager = "alertmanager"
	TypeWebhook      = "webhook"
	TypeSlack        = "slack"
	TypeExec         = "exec"
)

// Defaults.
const (
	DefaultRepeatInterval      = 4 * time.Hour
	DefaultExhaustionThreshold = 24 * time.Hour
	DefaultTimeout             = 10 * time.Second
	DefaultQueueSize           = 256
	DefaultRetryInitial        = time.Second
	DefaultRetryMax            = time.Minute
	DefaultRetryAttempts       = 5
)

// Config is the "alerts" section of soakd's configuration. Decode it
// strictly (KnownFields) into a value from DefaultConfig, or call
// ApplyDefaults after decoding; then Validate.
type Config struct {
	// RepeatInterval is the least time between two sends of a firing alert.
	RepeatInterval time.Duration `yaml:"repeat_interval"`
	// ExhaustionThreshold: a time to exhaustion below it fires
	// AlertExhaustion.
	ExhaustionThreshold time.Duration `yaml:"exhaustion_threshold"`
	// ExternalURL is soakd's URL as seen from the alert's reader; it builds
	// the alerts' GeneratorURL.
	ExternalURL string `yaml:"external_url"`
	// QueueSize bounds each sink's queue of pending sends.
	QueueSize int          `yaml:"queue_size"`
	Retry     RetryConfig  `yaml:"retry"`
	Sinks     []SinkConfig `yaml:"sinks"`
}

// RetryConfig is the backoff of retryable failures.
type RetryConfig struct {
	Initial     time.Duration `yaml:"initial"`
	Max         time.Duration `yaml:"max"`
	MaxAttempts int           `yaml:"max_attempts"`
}

// DefaultConfig returns a Config with every default set and no sinks.
func DefaultConfig() Config {
	var c Config
	c.ApplyDefaults()
	return c
}

// ApplyDefaults sets every zero field that has a default.
func (c *Config) ApplyDefaults() {
	setDefault(&c.RepeatInterval, DefaultRepeatInterval)
	setDefault(&c.ExhaustionThreshold, DefaultExhaustionThreshold)
	setDefault(&c.Retry.Initial, DefaultRetryInitial)
	setDefault(&c.Retry.Max, DefaultRetryMax)
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.Retry.MaxAttempts == 0 {
		c.Retry.MaxAttempts = DefaultRetryAttempts
	}
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d == 0 {
		*d = v
	}
}

// Validate checks c; the errors are field.Errors at the field's path,
// e.g. "alerts.sinks[1].url: required for type webhook". Call it after
// ApplyDefaults.
func (c Config) Validate() error {
	var es field.Errors
	c.validateGlobal(&es)
	seen := map[string]int{}
	for i, s := range c.Sinks {
		p := fmt.Sprintf("alerts.sinks[%d]", i)
		if j, dup := seen[s.Name]; dup && s.Name != "" {
			es.Add(p+".name", "%q already used by sinks[%d]", s.Name, j)
		}
		seen[s.Name] = i
		s.validate(p, &es)
	}
	return es.Err()
}

func (c Config) validateGlobal(es *field.Errors) {
	if c.RepeatInterval <= 0 {
		es.Add("alerts.repeat_interval", "must be > 0, got %s", c.RepeatInterval)
	}
	if c.ExhaustionThreshold < 0 {
		es.Add("alerts.exhaustion_threshold", "must be >= 0, got %s", c.ExhaustionThreshold)
	}
	if c.ExternalURL != "" {
		checkHTTPURL(es, "alerts.external_url", c.ExternalURL)
	}
	if c.QueueSize < 1 {
		es.Add("alerts.queue_size", "must be >= 1, got %d", c.QueueSize)
	}
	if c.Retry.Initial <= 0 || c.Retry.Max < c.Retry.Initial {
		es.Add("alerts.retry", "need 0 < initial <= max, got initial %s, max %s", c.Retry.Initial, c.Retry.Max)
	}
	if c.Retry.MaxAttempts < 1 {
		es.Add("alerts.retry.max_attempts", "must be >= 1, got %d", c.Retry.MaxAttempts)
	}
}

// SetDirectory makes the sinks' relative file paths (a webhook's
// secret_file) relative to dir, the config file's directory.
func (c *Config) SetDirectory(dir string) {
	for _, s := range c.Sinks {
		if d, ok := s.Settings.(dirSetter); ok {
			d.setDirectory(dir)
		}
	}
}

// SinkRepeats returns the sinks' own repeat intervals by name, for
// ManagerOptions.SinkRepeat.
func (c Config) SinkRepeats() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range c.Sinks {
		if s.RepeatInterval > 0 {
			out[s.Name] = s.RepeatInterval
		}
	}
	return out
}
