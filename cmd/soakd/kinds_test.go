package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/runner"
)

// Each target kind in probes' table round-trips to a run's options
// through soakd run's flag and a job's YAML key, and the "only one"
// errors of both front ends name every kind of the table, no more.
func TestTargetKindsRoundTrip(t *testing.T) {
	var all []string
	var names []string
	for _, k := range probes.Kinds() {
		if k.Field == nil {
			continue // the default: no field sets it
		}
		all = append(all, "--"+k.Name, k.Example)
		names = append(names, k.Name)
		t.Run(k.Name, func(t *testing.T) {
			o, _, err := parseRun([]string{"--" + k.Name, k.Example, "-n", "1", "http://127.0.0.1:8080/"}, &bytes.Buffer{})
			if err != nil {
				t.Fatalf("--%s %q: %v", k.Name, k.Example, err)
			}
			if got := o.Target.Kind(); got != k {
				t.Errorf("--%s %q: kind %s; want %s", k.Name, k.Example, got.Name, k.Name)
			}
			jo := jobOptions(t, fmt.Sprintf("{%s: %s}", k.Name, yamlValue(k)))
			if got := jo.Target.Kind(); got != k {
				t.Errorf("target.%s %q: kind %s; want %s", k.Name, k.Example, got.Name, k.Name)
			}
		})
	}
	_, _, err := parseRun(append(all, "-n", "1", "http://127.0.0.1:8080/"), &bytes.Buffer{})
	if got, want := namedKinds(err, "--"), names; !equal(got, want) {
		t.Errorf("soakd run with every kind: the error names %v; want %v (%v)", got, want, err)
	}
	_, err = config.Parse("k.yaml", []byte(job(fmt.Sprintf("{%s: 1, %s: x}", names[0], names[1]))))
	if got, want := namedKinds(err, ""), names; !equal(got, want) {
		t.Errorf("a job with two kinds: the error names %v; want %v (%v)", got, want, err)
	}
}

// job is a config file with one job whose target is target.
func job(target string) string {
	return "jobs:\n  - name: j\n    schedule: '@daily'\n    target: " + target + "\n    load: {url: 'http://127.0.0.1:8080/', duration: 1h}\n"
}

// yamlValue is k's example as a YAML value of its field's type.
func yamlValue(k *probes.Kind) string {
	if _, ok := k.Field(&probes.Spec{}).(*string); ok {
		return fmt.Sprintf("%q", k.Example)
	}
	return k.Example
}

func jobOptions(t *testing.T, target string) runner.Options {
	t.Helper()
	c, err := config.Parse("k.yaml", []byte(job(target)))
	if err != nil {
		t.Fatalf("target: %s: %v", target, err)
	}
	o, err := c.Jobs[0].Options()
	if err != nil {
		t.Fatalf("target: %s: %v", target, err)
	}
	return o
}

// namedKinds lists the kinds named in err's "set only one of" list,
// spelt with prefix ("--" for flags, "" for config keys).
func namedKinds(err error, prefix string) []string {
	if err == nil {
		return nil
	}
	_, list, ok := strings.Cut(err.Error(), "set only one of ")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, " (")
	var got []string
	for _, n := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if n != "or" {
			got = append(got, strings.TrimPrefix(n, prefix))
		}
	}
	return got
}

func equal(a, b []string) bool { return strings.Join(a, " ") == strings.Join(b, " ") }
