package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/abrun"
	"github.com/soakd/soakd/soak/compare"
)

func TestABUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--b", "x {port}"}, "--a: give build A's command"},
		{[]string{"--a", "x {port}"}, "--b: give build B's command"},
		{[]string{"--a", "x {port}", "--a-pid", "5", "--b-url", "http://127.0.0.1:1"}, "--a-pid: not with --a"},
		{[]string{"--a", "x {port}", "--b", "y {port}", "-c", "0"}, "--concurrency: must be >= 1"},
		{[]string{"--a", "x {port}", "--b", "y {port}", "--block", "5"}, "--block: must be >= 10"},
		{[]string{"--a", "x {port}", "--b", "y {port}", "--alpha", "1"}, "--alpha: must be between 0 and 1"},
		{[]string{"--a", "x {port}", "--b", "y {port}", "api"}, `URL path "api": must start with /`},
		{[]string{"--a", "x", "--b", "y {port}"}, "a: the command must hold {port}"},
		{[]string{"--a", "x {port}", "--b", "y {port}", "--cpu-margin", "-1"}, "--cpu-margin: must be a number >= 0"},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"ab"}, c.args...), &out, &errb); code != exitUsage {
			t.Errorf("ab %v: exit %d; want %d", c.args, code, exitUsage)
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("ab %v: stderr %q; want it to hold %q", c.args, errb.String(), c.want)
		}
	}
}

func TestABExit(t *testing.T) {
	for _, c := range []struct {
		res  abrun.Result
		want int
	}{
		{abrun.Result{Result: compare.Result{Verdict: compare.Same}}, exitOK},
		{abrun.Result{Result: compare.Result{Verdict: compare.Improved}}, exitOK},
		{abrun.Result{Result: compare.Result{Verdict: compare.Regressed}}, 1},
		{abrun.Result{Result: compare.Result{Verdict: compare.Inconclusive}}, 4},
		{abrun.Result{Result: compare.Result{Verdict: compare.Regressed}, StoppedBy: "b_died"}, exitTargetDied},
	} {
		if got := abExit(&c.res); got != c.want {
			t.Errorf("abExit(%s, %s) = %d; want %d", c.res.Verdict, c.res.StoppedBy, got, c.want)
		}
	}
}
