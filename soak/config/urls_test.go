package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/probes/remote"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/urlx"
)

// urlCases are URLs good and bad, with whether soakd takes them. The
// secrets in them are spelled PASSW0RD and T0KEN, and no message may
// show them.
var urlCases = []struct {
	raw string
	ok  bool
}{
	{"http://127.0.0.1:8080/", true},
	{"https://example.invalid/api", true},
	{"HTTP://127.0.0.1/", true},
	{"http://[::1]:80/", true},
	{"http://127.0.0.1:65535/", true},
	{"http://bücher.example/", true},
	{"http://user:PASSW0RD@127.0.0.1:8080/", true},
	{"http://127.0.0.1:8080/items?token=T0KEN", true},
	{"127.0.0.1:8080", false},
	{"localhost:8080", false},
	{"soakd.example.com", false},
	{"ftp://127.0.0.1/", false},
	{"ftp://user:PASSW0RD@127.0.0.1/?token=T0KEN", false},
	{"http://127.0.0.1:0/", false},
	{"http://user:PASSW0RD@127.0.0.1:0/?token=T0KEN", false},
	{"http://127.0.0.1:65536/", false},
	{"http://[::1]:0/", false},
	{"http:///path", false},
	{"http://:8080/", false},
	{"http://a b/", false},
	{"http://\u00ad/", false},
}

// urlEntry checks raw where one setting takes a URL, and returns the
// error about that setting ("" when it took raw).
type urlEntry struct {
	name, path string
	check      func(t *testing.T, raw string) string
}

var urlEntries = []urlEntry{
	{"runner spec", "load.url", func(t *testing.T, raw string) string {
		s := runner.Spec{Load: runner.LoadSpec{URL: raw}}
		return pathErr(s.Check().Error(), "load.url")
	}},
	{"config job", "jobs[0].load.url", func(t *testing.T, raw string) string {
		return parseErr(t, "jobs:\n  - name: web\n    schedule: '@daily'\n    load:\n      url: "+quote(raw)+"\n      duration: 1h\n", "jobs[0].load.url")
	}},
	{"config external_url", "external_url", func(t *testing.T, raw string) string {
		return parseErr(t, "external_url: "+quote(raw)+"\n"+job(""), "external_url")
	}},
	{"alerts external_url", "alerts.external_url", func(t *testing.T, raw string) string {
		c := alerts.DefaultConfig()
		c.ExternalURL = raw
		return pathErr(errText(c.Validate()), "alerts.external_url")
	}},
	{"alerts webhook", "alerts.sinks[0].url", func(t *testing.T, raw string) string {
		c := alerts.DefaultConfig()
		c.Sinks = []alerts.SinkConfig{{Name: "hook", Type: alerts.TypeWebhook, Settings: &alerts.WebhookConfig{URL: raw}}}
		return pathErr(errText(c.Validate()), "alerts.sinks[0].url")
	}},
	{"alerts alertmanager", "alerts.sinks[0].urls[0]", func(t *testing.T, raw string) string {
		c := alerts.DefaultConfig()
		c.Sinks = []alerts.SinkConfig{{Name: "am", Type: alerts.TypeAlertmanager, Settings: &alerts.AlertmanagerConfig{URLs: []string{raw}}}}
		return pathErr(errText(c.Validate()), "alerts.sinks[0].urls[0]")
	}},
	{"remote metrics_url", "target.remote.metrics_url", func(t *testing.T, raw string) string {
		return pathErr(errText(remote.Config{MetricsURL: raw}.Validate()), "target.remote.metrics_url")
	}},
	{"remote prometheus_url", "target.remote.prometheus_url", func(t *testing.T, raw string) string {
		c := remote.Config{PrometheusURL: raw, Selector: `{job="api"}`}
		return pathErr(errText(c.Validate()), "target.remote.prometheus_url")
	}},
	{"load engine", "load: endpoints[0].url", func(t *testing.T, raw string) string {
		_, err := load.New(load.Options{Endpoints: []load.Endpoint{{URL: raw}}, Requests: 1})
		return pathErr(errText(err), "load: endpoints[0].url")
	}},
}

// TestURLEntryPoints feeds the same URLs to every setting that takes one:
// each takes or refuses a URL as urlx.Parse does, and says so with
// urlx's message under the setting's path, secrets hidden.
func TestURLEntryPoints(t *testing.T) {
	for _, c := range urlCases {
		_, perr := urlx.Parse(c.raw, urlx.HTTP)
		if (perr == nil) != c.ok {
			t.Errorf("urlx.Parse(%q) = %v; want ok %v", c.raw, perr, c.ok)
			continue
		}
		for _, e := range urlEntries {
			t.Run(e.name+"/"+c.raw, func(t *testing.T) {
				got := e.check(t, c.raw)
				switch {
				case c.ok && got != "":
					t.Errorf("got %q; want %s to take it", got, e.path)
				case !c.ok && !strings.Contains(got, perr.Error()):
					t.Errorf("got %q; want an error at %s with %q", got, e.path, perr)
				case strings.Contains(got, "PASSW0RD") || strings.Contains(got, "T0KEN"):
					t.Errorf("got %q; it shows a secret", got)
				}
			})
		}
	}
}

// pathErr is the line of msg about path, or "".
func pathErr(msg, path string) string {
	for _, line := range strings.Split(msg, "\n") {
		if strings.Contains(line, path+": ") {
			return line
		}
	}
	return ""
}

// parseErr parses a config file and returns its error about path, or "".
func parseErr(t *testing.T, yaml, path string) string {
	t.Helper()
	_, err := Parse("soakd.yaml", []byte(yaml))
	return pathErr(errText(err), path)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// quote writes s as a YAML (JSON) string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDefaultExternalURLPassesTheURLRule checks that the external_url
// derived from listen is one the alerts take: none for port 0.
func TestDefaultExternalURLPassesTheURLRule(t *testing.T) {
	for _, c := range []struct{ listen, want string }{
		{"127.0.0.1:7797", "http://127.0.0.1:7797"},
		{"[::1]:7797", "http://[::1]:7797"},
		{"127.0.0.1:0", ""},
	} {
		cfg, err := Parse("soakd.yaml", []byte("listen: "+quote(c.listen)+"\n"+job("")))
		if err != nil {
			t.Errorf("listen %s: %v", c.listen, err)
		} else if cfg.ExternalURL != c.want || cfg.Alerts.ExternalURL != c.want {
			t.Errorf("listen %s: external_url %q, alerts %q; want %q", c.listen, cfg.ExternalURL, cfg.Alerts.ExternalURL, c.want)
		}
	}
}
