// Package remote samples a target that soakd cannot see through the local
// /proc: through the Prometheus metrics it already exposes, either its own
// endpoint (MetricsURL, scraped at each sample) or a Prometheus server
// that holds its series (PrometheusURL with a Selector). It maps the
// standard series (the client libraries' process_*, cAdvisor's
// container_*, process-exporter's namedprocess_namegroup_*) to
// probes.Sample, and marks what the source cannot see as absent.
package remote

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	promcfg "github.com/prometheus/common/config"
	"github.com/soakd/soakd/soak/field"

	"github.com/soakd/soakd/soak/urlx"
)

// Config selects a remote source and says how to reach it. It is also the
// daemon job's `target.remote` YAML block.
type Config struct {
	// MetricsURL is the target's own Prometheus endpoint (/metrics).
	MetricsURL string `yaml:"metrics_url"`
	// PrometheusURL is a Prometheus server's base URL; Selector picks the
	// target's series there, e.g. {pod="api-7d9c"}.
	PrometheusURL string `yaml:"prometheus_url"`
	Selector      string `yaml:"selector"`
	// Metrics are extra gauges fitted as resources, each NAME=SERIES or
	// NAME=SERIES{label="value",...}.
	Metrics []string `yaml:"metrics"`

	// Credentials and TLS, for either source. The files are read when the
	// source opens; their contents are never logged or reported.
	BearerTokenFile    string `yaml:"bearer_token_file"`
	BasicAuthFile      string `yaml:"basic_auth_file"` // one line: user:password
	CAFile             string `yaml:"ca_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`

	// Timeout bounds each scrape or query (default 5s).
	Timeout time.Duration `yaml:"timeout"`
}

// remotePath is the spec path of a Config field (its YAML name, under a
// run's target.remote), by which soakd run names its flag and a daemon
// job its line (package field).
func remotePath(name string) string { return "target.remote." + name }

// Enabled reports whether c selects a remote source.
func (c Config) Enabled() bool { return c.MetricsURL != "" || c.PrometheusURL != "" }

// Validate checks c without touching the network or the files. An
// extra's NAME that a resource of the run's table takes is the runner's
// to refuse: the table is soak/model's.
func (c Config) Validate() error {
	switch {
	case c.MetricsURL != "" && c.PrometheusURL != "":
		return field.Errorf(remotePath("metrics_url"), "give either a metrics URL or a Prometheus URL, not both")
	case c.PrometheusURL != "" && c.Selector == "":
		return field.Errorf(remotePath("selector"), "a Prometheus source needs a selector that picks the target's series, e.g. {pod=\"api-7d9c\"}")
	case c.Selector != "" && c.PrometheusURL == "":
		return field.Errorf(remotePath("selector"), "a selector only applies to a Prometheus source (prometheus_url)")
	case !c.Enabled() && (len(c.Metrics) > 0 || c.BearerTokenFile != "" || c.BasicAuthFile != "" || c.CAFile != "" || c.InsecureSkipVerify):
		return field.Errorf(remotePath("metrics_url"), "metrics, credentials and TLS settings need a remote source (metrics_url or prometheus_url)")
	case c.BearerTokenFile != "" && c.BasicAuthFile != "":
		return field.Errorf(remotePath("bearer_token_file"), "give a bearer token file or a basic auth file, not both")
	case c.Timeout < 0:
		return field.Errorf(remotePath("timeout"), "must be >= 0, got %s", c.Timeout)
	}
	for _, f := range []struct{ name, v string }{{"metrics_url", c.MetricsURL}, {"prometheus_url", c.PrometheusURL}} {
		if f.v == "" {
			continue
		}
		u, err := urlx.Parse(f.v, urlx.HTTP)
		if err != nil {
			return field.Errorf(remotePath(f.name), "%w", err)
		}
		if u.User != nil && (c.BasicAuthFile != "" || c.BearerTokenFile != "") {
			return field.Errorf(remotePath(f.name), "has credentials, and so does {%s}: give them in one place (the file keeps them out of the config)", remotePath(credFile(c)))
		}
	}
	if c.Selector != "" {
		if _, err := parseSelector(c.Selector); err != nil {
			return field.Errorf(remotePath("selector"), "%w", err)
		}
	}
	seen := map[string]bool{}
	for i, m := range c.Metrics {
		x, err := ParseExtra(m)
		if err != nil {
			return field.Errorf(remotePath(fmt.Sprintf("metrics[%d]", i)), "%w", err)
		}
		if seen[x.Name] || x.Name == kWorkingSet {
			return field.Errorf(remotePath(fmt.Sprintf("metrics[%d]", i)), "resource name %q is taken; choose another NAME", x.Name)
		}
		seen[x.Name] = true
	}
	return nil
}

// Extra is one --probe-metric: the gauge Metric with the labels Labels,
// fitted as the resource Name.
type Extra struct {
	Name   string
	Metric string
	Labels map[string]string
}

var (
	nameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	labelRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*("(?:[^"\\]|\\.)*")\s*(?:,|$)`)
)

// ParseExtra reads NAME=SERIES or NAME=SERIES{label="value",...}.
func ParseExtra(s string) (Extra, error) {
	name, series, ok := strings.Cut(s, "=")
	if !ok || !nameRE.MatchString(name) {
		return Extra{}, fmt.Errorf("%q: want NAME=SERIES{label=\"value\"}, e.g. heap_bytes=jvm_memory_used_bytes{area=\"heap\"}; NAME is letters, digits and _", s)
	}
	metric, sel, hasSel := strings.Cut(series, "{")
	if !nameRE.MatchString(metric) {
		return Extra{}, fmt.Errorf("%q: %q is not a metric name", s, metric)
	}
	x := Extra{Name: name, Metric: metric, Labels: map[string]string{}}
	if hasSel {
		ls, err := parseSelector("{" + sel)
		if err != nil {
			return Extra{}, fmt.Errorf("%q: %w", s, err)
		}
		x.Labels = ls
	}
	return x, nil
}

// parseSelector reads {label="value",...}: equality matchers only, which
// is what picks one target's series.
func parseSelector(s string) (map[string]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, fmt.Errorf("%q: want {label=\"value\",...}, e.g. {pod=\"api-7d9c\"}", s)
	}
	body := s[1 : len(s)-1]
	out := map[string]string{}
	for strings.TrimSpace(body) != "" {
		m := labelRE.FindStringSubmatch(body)
		if m == nil {
			return nil, fmt.Errorf("%q: cannot read the label matcher at %q; want label=\"value\" (only = matchers are supported)", s, strings.TrimSpace(body))
		}
		v, err := strconv.Unquote(m[2])
		if err != nil {
			return nil, fmt.Errorf("%q: label %s: %w", s, m[1], err)
		}
		out[m[1]] = v
		body = body[len(m[0]):]
	}
	return out, nil
}

// credFile is the name of the credential file c gives.
func credFile(c Config) string {
	if c.BasicAuthFile != "" {
		return "basic_auth_file"
	}
	return "bearer_token_file"
}

// httpConfig builds the HTTP client settings from the credential fields,
// with prometheus/common's config (what Prometheus itself scrapes with).
func (c Config) httpConfig() (promcfg.HTTPClientConfig, error) {
	hc := promcfg.DefaultHTTPClientConfig
	hc.TLSConfig.CAFile = c.CAFile
	hc.TLSConfig.InsecureSkipVerify = c.InsecureSkipVerify
	if c.BearerTokenFile != "" {
		if _, err := os.Stat(c.BearerTokenFile); err != nil {
			return hc, field.Errorf(remotePath("bearer_token_file"), "%w", err)
		}
		hc.Authorization = &promcfg.Authorization{Type: "Bearer", CredentialsFile: c.BearerTokenFile}
	}
	if c.BasicAuthFile != "" {
		b, err := os.ReadFile(c.BasicAuthFile)
		if err != nil {
			return hc, field.Errorf(remotePath("basic_auth_file"), "%w", err)
		}
		user, pass, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
		if !ok || user == "" {
			return hc, field.Errorf(remotePath("basic_auth_file"), "%s: want one line user:password", c.BasicAuthFile)
		}
		hc.BasicAuth = &promcfg.BasicAuth{Username: user, Password: promcfg.Secret(pass)}
	}
	if c.CAFile != "" {
		if _, err := os.Stat(c.CAFile); err != nil {
			return hc, field.Errorf(remotePath("ca_file"), "%w", err)
		}
	}
	if err := hc.Validate(); err != nil {
		return hc, errors.New("credentials: " + err.Error())
	}
	return hc, nil
}

// client is the HTTP client of either source: the credentials and TLS
// settings, and the timeout. setting names the source's URL, for
// an error.
func (c Config) client(setting string) (*http.Client, error) {
	hc, err := c.httpConfig()
	if err != nil {
		return nil, err
	}
	client, err := promcfg.NewClientFromConfig(hc, "soakd-probe")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	client.Timeout = c.timeout()
	return client, nil
}

// extras are the extra series, parsed (Validate checked them).
func (c Config) extras() []Extra {
	var xs []Extra
	for _, m := range c.Metrics {
		x, _ := ParseExtra(m)
		xs = append(xs, x)
	}
	return xs
}

func (c Config) timeout() time.Duration {
	if c.Timeout == 0 {
		return 5 * time.Second
	}
	return c.Timeout
}
