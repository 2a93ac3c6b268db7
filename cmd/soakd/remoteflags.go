package main

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/probes/remote"
)

// declareRemote declares the remote probe source's flags into c.
func declareRemote(fs *pflag.FlagSet, c *remote.Config) {
	fs.StringVar(&c.MetricsURL, "probe-metrics", "", "sample the target through its own Prometheus endpoint, scraped at each sample (e.g. http://api:8080/metrics), instead of /proc")
	fs.StringArrayVar(&c.Metrics, "probe-metric", nil, "with a remote source: fit this gauge as an extra resource, NAME=SERIES{label=\"value\"} (repeatable); a NAME ending in _bytes is memory")
	fs.StringVar(&c.PrometheusURL, "probe-prometheus", "", "sample the target through this Prometheus server's series (e.g. http://prometheus:9090), picked by --probe-selector")
	fs.StringVar(&c.Selector, "probe-selector", "", "with --probe-prometheus: the labels that pick the target's series, e.g. '{pod=\"api-7d9c\",container=\"api\"}'")
	fs.StringVar(&c.BearerTokenFile, "probe-bearer-token-file", "", "remote source: send the bearer token in this file")
	fs.StringVar(&c.BasicAuthFile, "probe-basic-auth-file", "", "remote source: basic auth from this file, one line user:password")
	fs.StringVar(&c.CAFile, "probe-ca-file", "", "remote source: verify https with this CA certificate file")
	fs.BoolVar(&c.InsecureSkipVerify, "probe-insecure-skip-verify", false, "remote source: do not verify https certificates")
	fs.DurationVar(&c.Timeout, "probe-timeout", 0, "remote source: timeout of each scrape or query (default 5s)")
}

// remoteFlags maps remote.Config's fields to their flags.
var remoteFlags = map[string]string{
	"metrics_url": "--probe-metrics", "prometheus_url": "--probe-prometheus", "selector": "--probe-selector",
	"metrics": "--probe-metric", "bearer_token_file": "--probe-bearer-token-file", "basic_auth_file": "--probe-basic-auth-file",
	"ca_file": "--probe-ca-file", "insecure_skip_verify": "--probe-insecure-skip-verify", "timeout": "--probe-timeout",
}

// cliError names a remote source's bad field by its flag.
func cliError(err error) error {
	var fe *remote.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	field, index, _ := strings.Cut(fe.Field, "[")
	flag, ok := remoteFlags[field]
	if !ok {
		return err
	}
	if index != "" {
		flag += " #" + strings.TrimSuffix(index, "]")
	}
	return errors.New(flag + ": " + fe.Err.Error())
}
