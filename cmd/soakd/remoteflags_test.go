package main

import (
	"io"
	"strings"
	"testing"
)

func TestRemoteFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--probe-prometheus", "http://127.0.0.1:9090"}, "--probe-selector: a Prometheus source needs a selector"},
		{[]string{"--probe-selector", `{pod="a"}`}, "--probe-selector: a selector only applies to a Prometheus source"},
		{[]string{"--probe-metrics", "http://127.0.0.1:1/metrics", "--probe-metric", "heap"}, "--probe-metric: \"heap\": want NAME=SERIES"},
		{[]string{"--probe-metrics", "http://127.0.0.1:1/metrics", "--probe-bearer-token-file", "a", "--probe-basic-auth-file", "b"}, "--probe-bearer-token-file: give a bearer token file or a basic auth file, not both"},
		{[]string{"--probe-metrics", "127.0.0.1:1"}, "--probe-metrics: \"127.0.0.1:1\" has no scheme: want an absolute http:// or https:// URL"},
	}
	for _, tc := range tests {
		_, _, err := parseRun(append(tc.args, "-d", "1m", "http://127.0.0.1:1/"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error containing %q", tc.args, err, tc.want)
		}
	}
	o, _, err := parseRun([]string{"--probe-metrics", "http://127.0.0.1:1/metrics", "--probe-metric", `heap_bytes=jvm_memory_used_bytes{area="heap"}`, "-d", "1m", "http://127.0.0.1:1/"}, io.Discard)
	if err != nil || o.Remote.MetricsURL != "http://127.0.0.1:1/metrics" || len(o.Remote.Metrics) != 1 {
		t.Errorf("parseRun: %+v, %v; want the metrics URL and one extra metric", o.Remote, err)
	}
}
