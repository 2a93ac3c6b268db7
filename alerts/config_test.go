package alerts

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"go.yaml.in/yaml/v3"

	"github.com/soakd/soakd/soak/field"
)

// decode decodes an "alerts:" document strictly over the defaults, as the
// daemon's config loader will.
func decode(t *testing.T, doc string) (Config, error) {
	t.Helper()
	var wrap struct {
		Alerts Config `yaml:"alerts"`
	}
	wrap.Alerts = DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.KnownFields(true)
	err := dec.Decode(&wrap)
	return wrap.Alerts, err
}

const exampleConfig = `
alerts:
  repeat_interval: 4h
  exhaustion_threshold: 24h
  external_url: http://soakhost:7797
  sinks:
    - name: am
      type: alertmanager
      urls: [http://127.0.0.1:9093, http://127.0.0.1:9094]
    - name: hook
      type: webhook
      url: https://example.invalid/hook
      secret_file: SECRET_FILE
      headers: {X-Team: payments}
      timeout: 10s
    - name: chat
      type: slack
      url: https://hooks.slack.invalid/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX
      repeat_interval: 12h
    - name: run-script
      type: exec
      command: [/usr/local/bin/page, --team, web]
      timeout: 10s
`

func TestConfigExampleBuilds(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := decode(t, strings.Replace(exampleConfig, "SECRET_FILE", secret, 1))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	sinks, err := Build(c, BuildOptions{Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if got := c.SinkRepeats(); len(got) != 1 || got["chat"] != 12*time.Hour {
		t.Errorf("the sinks' own repeat intervals: %v; want chat's 12h only", got)
	}
	if c.QueueSize != DefaultQueueSize || c.Retry.MaxAttempts != DefaultRetryAttempts {
		t.Errorf("defaults lost: queue %d, attempts %d", c.QueueSize, c.Retry.MaxAttempts)
	}
	if hook := sinks["hook"].(*Webhook); string(hook.secret) != "s3cret" {
		t.Errorf("secret: got %q; want s3cret (newline trimmed)", hook.secret)
	}
	wantTypes := map[string]string{"am": "*alerts.Alertmanager", "hook": "*alerts.Webhook", "chat": "*alerts.Slack", "run-script": "*alerts.Exec"}
	for name, typ := range wantTypes {
		if got := typeName(sinks[name]); got != typ {
			t.Errorf("sink %s: got %s; want %s", name, got, typ)
		}
	}
}

func typeName(s Sink) string {
	switch s.(type) {
	case *Alertmanager:
		return "*alerts.Alertmanager"
	case *Webhook:
		return "*alerts.Webhook"
	case *Slack:
		return "*alerts.Slack"
	case *Exec:
		return "*alerts.Exec"
	}
	return "?"
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"unknown field", "alerts:\n  repet_interval: 1h\n", "field repet_interval not found"},
		{"webhook without url", "alerts:\n  sinks:\n    - {name: a, type: alertmanager, urls: [http://x:1]}\n    - {name: hook, type: webhook}\n",
			"alerts.sinks[1].url: required for type webhook"},
		{"missing type", "alerts:\n  sinks:\n    - {name: a}\n", "alerts.sinks[0].type: required"},
		{"unknown type", "alerts:\n  sinks:\n    - {name: a, type: pager}\n", `alerts.sinks[0].type: unknown type "pager"`},
		{"duplicate name", "alerts:\n  sinks:\n    - {name: a, type: slack, url: http://x/}\n    - {name: a, type: slack, url: http://y/}\n",
			`alerts.sinks[1].name: "a" already used by sinks[0]`},
		{"bad name", "alerts:\n  sinks:\n    - {name: 'a b', type: slack, url: http://x/}\n", `alerts.sinks[0].name: "a b"`},
		{"no urls", "alerts:\n  sinks:\n    - {name: a, type: alertmanager}\n", "alerts.sinks[0].urls: required for type alertmanager"},
		{"url scheme, redacted", "alerts:\n  sinks:\n    - {name: a, type: alertmanager, urls: ['ftp://u:pw@h/']}\n",
			`alerts.sinks[0].urls[0]: "ftp://REDACTED@h/": scheme "ftp" is not taken here: want an absolute http:// or https:// URL`},
		{"field of another type", "alerts:\n  sinks:\n    - {name: a, type: webhook, url: http://x/, command: [/bin/true]}\n",
			"field command not found in a sink of type webhook"},
		{"slack secret", "alerts:\n  sinks:\n    - {name: a, type: slack, url: http://x/, secret: s}\n",
			"field secret not found in a sink of type slack"},
		{"both secrets", "alerts:\n  sinks:\n    - {name: a, type: webhook, url: http://x/, secret: s, secret_file: /f}\n",
			"alerts.sinks[0].secret: set secret or secret_file, not both"},
		{"exec without command", "alerts:\n  sinks:\n    - {name: a, type: exec}\n", "alerts.sinks[0].command: required for type exec"},
		{"negative timeout", "alerts:\n  sinks:\n    - {name: a, type: exec, command: [x], timeout: -1s}\n", "alerts.sinks[0].timeout: must be >= 0"},
		{"negative repeat", "alerts:\n  repeat_interval: -1h\n", "alerts.repeat_interval: must be > 0"},
		{"negative sink repeat", "alerts:\n  sinks:\n    - {name: a, type: slack, url: http://x/, repeat_interval: -1h}\n",
			"alerts.sinks[0].repeat_interval: must be >= 0"},
		{"bad external url", "alerts:\n  external_url: soakhost\n", `alerts.external_url: "soakhost" has no scheme: want an absolute`},
		{"retry order", "alerts:\n  retry: {initial: 1m, max: 1s}\n", "alerts.retry: need 0 < initial <= max"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := decode(t, c.doc)
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
		})
	}
}

func TestBuildSecretFileMissing(t *testing.T) {
	c := DefaultConfig()
	c.Sinks = []SinkConfig{{Name: "hook", Type: TypeWebhook, Settings: &WebhookConfig{URL: "http://x/", SecretFile: "/nonexistent/secret"}}}
	if _, err := Build(c, BuildOptions{}); err == nil || !strings.Contains(err.Error(), "alerts.sinks[0]: secret_file") {
		t.Errorf("got %v; want alerts.sinks[0]: secret_file ...", err)
	}
}

// Every registered sink type decodes from its YAML keys into its own
// settings, and the message for an unknown type lists the registry.
func TestSinkRegistry(t *testing.T) {
	cfg, err := decode(t, "alerts:\n  sinks:\n    - {name: a, type: pager}\n")
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	for _, typ := range SinkTypes() {
		if err == nil || !strings.Contains(err.Error(), typ) {
			t.Errorf("unknown type: %v; want it to list %s", err, typ)
		}
		if (SinkConfig{}).VariantType(typ) == nil {
			t.Errorf("type %s: no settings type", typ)
		}
	}
	if fe := field.As(err); len(fe) != 1 || fe[0].Path != "alerts.sinks[0].type" {
		t.Errorf("unknown type: field errors %v; want one at alerts.sinks[0].type", fe)
	}
	c, err := decode(t, strings.Replace(exampleConfig, "SECRET_FILE", "/s", 1))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]SinkSettings{"am": &AlertmanagerConfig{}, "hook": &WebhookConfig{}, "chat": &SlackConfig{}, "run-script": &ExecConfig{}}
	for _, s := range c.Sinks {
		if reflect.TypeOf(s.Settings) != reflect.TypeOf(want[s.Name]) {
			t.Errorf("sink %s: settings %T; want %T", s.Name, s.Settings, want[s.Name])
		}
	}
}
