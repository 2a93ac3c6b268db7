package main

import (
	"github.com/spf13/pflag"

	"github.com/soakd/soakd/probes/remote"
)

// declareRemote declares the remote probe source's flags into c, bound to
// their spec paths (target.remote.*) so that a remote error names its flag.
func declareRemote(fs *pflag.FlagSet, c *remote.Config) {
	for _, d := range []struct {
		path, name, usage string
		declare           func(name, usage string)
	}{
		{"metrics_url", "probe-metrics", "sample the target through its own Prometheus endpoint, scraped at each sample (e.g. http://api:8080/metrics), instead of /proc",
			func(n, u string) { fs.StringVar(&c.MetricsURL, n, c.MetricsURL, u) }},
		{"metrics", "probe-metric", "with a remote source: fit this gauge as an extra resource, NAME=SERIES{label=\"value\"} (repeatable); a NAME ending in _bytes is memory",
			func(n, u string) { fs.StringArrayVar(&c.Metrics, n, c.Metrics, u) }},
		{"prometheus_url", "probe-prometheus", "sample the target through this Prometheus server's series (e.g. http://prometheus:9090), picked by --probe-selector",
			func(n, u string) { fs.StringVar(&c.PrometheusURL, n, c.PrometheusURL, u) }},
		{"selector", "probe-selector", "with --probe-prometheus: the labels that pick the target's series, e.g. '{pod=\"api-7d9c\",container=\"api\"}'",
			func(n, u string) { fs.StringVar(&c.Selector, n, c.Selector, u) }},
		{"bearer_token_file", "probe-bearer-token-file", "remote source: send the bearer token in this file",
			func(n, u string) { fs.StringVar(&c.BearerTokenFile, n, c.BearerTokenFile, u) }},
		{"basic_auth_file", "probe-basic-auth-file", "remote source: basic auth from this file, one line user:password",
			func(n, u string) { fs.StringVar(&c.BasicAuthFile, n, c.BasicAuthFile, u) }},
		{"ca_file", "probe-ca-file", "remote source: verify https with this CA certificate file",
			func(n, u string) { fs.StringVar(&c.CAFile, n, c.CAFile, u) }},
		{"insecure_skip_verify", "probe-insecure-skip-verify", "remote source: do not verify https certificates",
			func(n, u string) { fs.BoolVar(&c.InsecureSkipVerify, n, c.InsecureSkipVerify, u) }},
		{"timeout", "probe-timeout", "remote source: timeout of each scrape or query (default 5s)",
			func(n, u string) { fs.DurationVar(&c.Timeout, n, c.Timeout, u) }},
	} {
		d.declare(d.name, d.usage)
		bind(fs, "target.remote."+d.path, d.name)
	}
}
