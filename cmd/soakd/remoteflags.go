package main

import (
	"github.com/spf13/pflag"

	"github.com/soakd/soakd/probes/remote"
)

// declareRemote declares the remote probe source's flags into c, bound to
// their spec paths (target.remote.*) so that a remote error names its flag.
func declareRemote(fs *pflag.FlagSet, c *remote.Config) {
	bound(fs, "target.remote.metrics_url", fs.StringVar, &c.MetricsURL, "probe-metrics", "sample the target through its own Prometheus endpoint, scraped at each sample (e.g. http://api:8080/metrics), instead of /proc")
	bound(fs, "target.remote.metrics", fs.StringArrayVar, &c.Metrics, "probe-metric", "with a remote source: fit this gauge as an extra resource, NAME=SERIES{label=\"value\"} (repeatable); a NAME ending in _bytes is memory")
	bound(fs, "target.remote.prometheus_url", fs.StringVar, &c.PrometheusURL, "probe-prometheus", "sample the target through this Prometheus server's series (e.g. http://prometheus:9090), picked by --probe-selector")
	bound(fs, "target.remote.selector", fs.StringVar, &c.Selector, "probe-selector", "with --probe-prometheus: the labels that pick the target's series, e.g. '{pod=\"api-7d9c\",container=\"api\"}'")
	bound(fs, "target.remote.bearer_token_file", fs.StringVar, &c.BearerTokenFile, "probe-bearer-token-file", "remote source: send the bearer token in this file")
	bound(fs, "target.remote.basic_auth_file", fs.StringVar, &c.BasicAuthFile, "probe-basic-auth-file", "remote source: basic auth from this file, one line user:password")
	bound(fs, "target.remote.ca_file", fs.StringVar, &c.CAFile, "probe-ca-file", "remote source: verify https with this CA certificate file")
	bound(fs, "target.remote.insecure_skip_verify", fs.BoolVar, &c.InsecureSkipVerify, "probe-insecure-skip-verify", "remote source: do not verify https certificates")
	bound(fs, "target.remote.timeout", fs.DurationVar, &c.Timeout, "probe-timeout", "remote source: timeout of each scrape or query (default 5s)")
}
