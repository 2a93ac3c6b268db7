package alerts

import (
	"errors"
	"fmt"
	"github.com/soakd/soakd/soak/urlx"
	"regexp"
	"time"
)

// Sink types.
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

// SinkConfig configures one sink; which fields apply depends on Type.
type SinkConfig struct {
	Name string `yaml:"name"`
	// Type is alertmanager, webhook, slack or exec.
	Type string `yaml:"type"`
	// URLs are the Alertmanagers' base URLs (alertmanager only).
	URLs []string `yaml:"urls"`
	// URL is the webhook or Slack incoming-webhook URL.
	URL string `yaml:"url"`
	// Secret signs webhook bodies; SecretFile names a file holding it
	// (trailing newline ignored). At most one of them (webhook only).
	Secret     string `yaml:"secret"`
	SecretFile string `yaml:"secret_file"`
	// Headers are added to each request (alertmanager, webhook, slack).
	Headers map[string]string `yaml:"headers"`
	// Command is the argv run by an exec sink (no shell).
	Command []string `yaml:"command"`
	// Timeout bounds one send; zero means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout"`
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

var sinkNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Validate checks c; errors name the field path, e.g.
// "alerts.sinks[1].url: required for type webhook". Call it after
// ApplyDefaults.
func (c Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("alerts.%s: "+format, append([]any{path}, args...)...))
	}
	c.validateGlobal(add)
	seen := map[string]int{}
	for i, s := range c.Sinks {
		p := fmt.Sprintf("sinks[%d]", i)
		if j, dup := seen[s.Name]; dup && s.Name != "" {
			add(p+".name", "%q already used by sinks[%d]", s.Name, j)
		}
		seen[s.Name] = i
		s.validate(p, add)
	}
	return errors.Join(errs...)
}

type addFunc func(path, format string, args ...any)

func (c Config) validateGlobal(add addFunc) {
	if c.RepeatInterval <= 0 {
		add("repeat_interval", "must be > 0, got %s", c.RepeatInterval)
	}
	if c.ExhaustionThreshold < 0 {
		add("exhaustion_threshold", "must be >= 0, got %s", c.ExhaustionThreshold)
	}
	if c.ExternalURL != "" {
		checkHTTPURL("external_url", c.ExternalURL, add)
	}
	if c.QueueSize < 1 {
		add("queue_size", "must be >= 1, got %d", c.QueueSize)
	}
	if c.Retry.Initial <= 0 || c.Retry.Max < c.Retry.Initial {
		add("retry", "need 0 < initial <= max, got initial %s, max %s", c.Retry.Initial, c.Retry.Max)
	}
	if c.Retry.MaxAttempts < 1 {
		add("retry.max_attempts", "must be >= 1, got %d", c.Retry.MaxAttempts)
	}
}

func (s SinkConfig) validate(p string, add addFunc) {
	if s.Name == "" {
		add(p+".name", "required")
	} else if !sinkNameRE.MatchString(s.Name) {
		add(p+".name", "%q: use letters, digits, '_', '.', '-'", s.Name)
	}
	if s.Timeout < 0 {
		add(p+".timeout", "must be >= 0, got %s", s.Timeout)
	}
	switch s.Type {
	case TypeAlertmanager:
		s.validateAlertmanager(p, add)
	case TypeWebhook, TypeSlack:
		s.validateHook(p, add)
	case TypeExec:
		s.validateExec(p, add)
	case "":
		add(p+".type", "required (alertmanager, webhook, slack or exec)")
	default:
		add(p+".type", "unknown type %q (want alertmanager, webhook, slack or exec)", s.Type)
	}
}

func (s SinkConfig) validateAlertmanager(p string, add addFunc) {
	if len(s.URLs) == 0 {
		add(p+".urls", "required for type alertmanager")
	}
	for i, u := range s.URLs {
		checkHTTPURL(fmt.Sprintf("%s.urls[%d]", p, i), u, add)
	}
	s.unused(p, add, "url", s.URL != "", "secret", s.Secret != "", "secret_file", s.SecretFile != "",
		"command", len(s.Command) > 0)
}

func (s SinkConfig) validateHook(p string, add addFunc) {
	if s.URL == "" {
		add(p+".url", "required for type %s", s.Type)
	} else {
		checkHTTPURL(p+".url", s.URL, add)
	}
	if s.Secret != "" && s.SecretFile != "" {
		add(p+".secret", "set secret or secret_file, not both")
	}
	s.unused(p, add, "urls", len(s.URLs) > 0, "command", len(s.Command) > 0)
	if s.Type == TypeSlack {
		s.unused(p, add, "secret", s.Secret != "", "secret_file", s.SecretFile != "")
	}
}

func (s SinkConfig) validateExec(p string, add addFunc) {
	if len(s.Command) == 0 || s.Command[0] == "" {
		add(p+".command", "required for type exec (an argv list, no shell)")
	}
	s.unused(p, add, "url", s.URL != "", "urls", len(s.URLs) > 0, "secret", s.Secret != "",
		"secret_file", s.SecretFile != "", "headers", len(s.Headers) > 0)
}

// unused reports each (field, set) pair whose field is set although the
// sink's type ignores it.
func (s SinkConfig) unused(p string, add addFunc, pairs ...any) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			add(p+"."+pairs[i].(string), "not used by type %s", s.Type)
		}
	}
}

// checkHTTPURL reports raw unless it is an absolute http(s) URL by
// urlx's rule. The message shows the URL redacted.
func checkHTTPURL(path, raw string, add addFunc) {
	if _, err := urlx.Parse(raw, urlx.HTTP); err != nil {
		add(path, "%v", err)
	}
}
