package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

func TestParseRunErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	badTargets := filepath.Join(dir, "targets")
	os.WriteFile(badTargets, []byte("GET http://127.0.0.1:1/\nzero GET http://127.0.0.1:1/\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no URL", []string{"-n", "10"}, "missing URL"},
		{"zero concurrency", []string{"-c", "0", "-n", "10", "http://a/"}, "--concurrency: must be >= 1, got 0"},
		{"negative concurrency", []string{"-c", "-1", "-n", "10", "http://a/"}, "--concurrency: must be >= 1, got -1"},
		{"two URLs", []string{"-n", "10", "http://a/", "http://b/"}, "one URL expected, got 2"},
		{"URL and targets", []string{"--targets", badTargets, "http://a/"}, "either a URL or --targets"},
		{"bad targets line", []string{"--targets", badTargets}, "--targets: " + badTargets + ":2"},
		{"bad header", []string{"-H", "NoColon", "http://a/"}, `--header: "NoColon": want "Name: value"`},
		{"bad regexp", []string{"--expect-body", "(", "http://a/"}, "--expect-body"},
		{"bad warmup", []string{"--warmup", "soon", "http://a/"}, `--warmup: "soon": want a request count`},
		{"bad mem limit", []string{"--mem-limit", "lots", "http://a/"}, `--mem-limit: "lots": want a size`},
		{"bad alpha", []string{"--alpha", "2", "http://a/"}, "--alpha: must be between 0 and 0.5"},
		{"missing body file", []string{"--body", "@/nonexistent/body", "http://a/"}, "--body"},
		{"unknown flag", []string{"--concurency", "2", "http://a/"}, "unknown flag: --concurency"},
		{"no stop", []string{"http://a/"}, "set --duration or --requests (or both): a soak must end by itself"},
		{"negative rate", []string{"-n", "10", "--rate", "-5", "http://a/"}, "--rate: must be >= 0 (0 = closed loop), got -5"},
		{"negative baseline", []string{"-n", "10", "--baseline", "-1s", "http://a/"}, "--baseline: must be >= 0 (0 skips it), got -1s"},
		{"zero horizon", []string{"-n", "10", "--leak-horizon", "0s", "http://a/"}, "--leak-horizon: must be > 0"},
		{"bad horizon growth", []string{"-n", "10", "--leak-horizon-growth", "lots", "http://a/"}, `--leak-horizon-growth: "lots": want a size > 0`},
		{"zero horizon fds", []string{"-n", "10", "--leak-horizon-fds", "0", "http://a/"}, "--leak-horizon-fds: must be > 0"},
		{"limit share over 1", []string{"-n", "10", "--leak-limit-share", "2", "http://a/"}, "--leak-limit-share: must be > 0 and <= 1"},
		{"zero exhaustion", []string{"-n", "10", "--exhaustion-within", "0s", "http://a/"}, "--exhaustion-within: must be > 0"},
		{"bad pprof URL", []string{"-n", "10", "--pprof", "localhost:6060", "http://a/"}, `--pprof: "localhost:6060": want an http(s) URL of a heap profile`},
		{"node inspector off loopback", []string{"-n", "10", "--node-inspect", "10.0.0.5:9229", "http://a/"}, `--node-inspect: "10.0.0.5:9229": 10.0.0.5 is not a loopback address: the inspector grants code execution`},
		{"node inspector without port", []string{"-n", "10", "--node-inspect", "127.0.0.1", "http://a/"}, `--node-inspect: "127.0.0.1": want HOST:PORT of a Node inspector, e.g. 127.0.0.1:9229`},
		{"snapshot cmd without pid", []string{"-n", "10", "--snapshot-cmd", "date", "http://a/"}, `--snapshot-cmd: "date": must hold the target's PID placeholder {pid}, e.g. 'jmap -histo:live {pid}'`},
		{"bad evidence limit", []string{"-n", "10", "--evidence-limit", "lots", "http://a/"}, `--evidence-limit: "lots": want a size`},
		{"until decided without a target", []string{"-d", "1m", "--until-decided", "--no-probe", "http://a/"}, "--until-decided: decides on the target's samples, and --no-probe samples none: drop one"},
		{"follow upstreams without a target", []string{"-d", "1m", "--follow-upstreams", "--no-probe", "http://a/"}, "--follow-upstreams: follows the sampled tree's upstreams, and --no-probe samples no tree: drop one"},
		{"follow upstreams of a remote source", []string{"-d", "1m", "--follow-upstreams", "--probe-metrics", "http://127.0.0.1:9/metrics", "http://a/"}, "--follow-upstreams: follows the upstreams found in /proc, and a remote source samples the target through its metrics instead: drop one"},
		{"until decided with no most", []string{"--until-decided", "http://a/"}, "set --duration or --requests (or both): a soak must end by itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			_, _, err := parseRun(tc.args, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseRun(%q) error = %v; want it to contain %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestParseRunMirrorsAbFlags(t *testing.T) {
	body := filepath.Join(t.TempDir(), "postData")
	os.WriteFile(body, []byte("a=b"), 0o644)
	// ab -c 5 -n 5000 -T application/x-www-form-urlencoded -p postData URL
	o, _, err := parseRun([]string{"-c", "5", "-n", "5000", "-T", "application/x-www-form-urlencoded",
		"-m", "post", "--body", "@" + body, "--expect-body", "405 Not Allowed", "http://127.0.0.1:8085/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	l := o.Load
	if l.Concurrency != 5 || l.Requests != 5000 || l.ContentType != "application/x-www-form-urlencoded" {
		t.Errorf("load = c %d n %d T %q; want c 5 n 5000 T form", l.Concurrency, l.Requests, l.ContentType)
	}
	if ep := l.Endpoints[0]; ep.Method != "POST" || string(ep.Body) != "a=b" || ep.URL != "http://127.0.0.1:8085/" {
		t.Errorf("endpoint = %+v; want POST a=b to the URL", ep)
	}
	if l.ExpectBody == nil || !l.KeepAlive || o.Target.URL != "http://127.0.0.1:8085/" {
		t.Errorf("expect-body %v keepalive %v target URL %q", l.ExpectBody, l.KeepAlive, o.Target.URL)
	}
}

func TestRunUnreachableTargetIsOneClearLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--no-probe", "-n", "10", "http://" + addr + "/"}, &stdout, &stderr)
	if code != exitUsage {
		t.Errorf("exit code = %d; want %d", code, exitUsage)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "cannot reach") || !strings.Contains(lines[0], "connection refused") {
		t.Errorf("stderr = %q; want one line saying it cannot reach the URL: connection refused", stderr.String())
	}
}

func TestRunJSONReportHoldsTheLoadFigures(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--no-probe", "-q", "--json", "-n", "200", "-c", "2", "--out", out, srv.URL + "/"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit code = %d; stderr %s", code, stderr.String())
	}
	var rep struct {
		Verdict string `json:"verdict"`
		Load    struct {
			Requests uint64  `json:"requests"`
			Errors   uint64  `json:"errors"`
			RPS      float64 `json:"rps"`
			Latency  struct {
				P50, P99, Max float64
			} `json:"latency_seconds"`
			StatusClasses map[string]uint64 `json:"status_classes"`
		} `json:"load"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	// The server also saw the pre-flight request, which is not in the soak.
	if rep.Load.Requests != 200 || rep.Load.Errors != 0 || rep.Load.StatusClasses["2xx"] != 200 || hits.Load() != 201 {
		t.Errorf("load = %+v (server saw %d); want 200 requests, 0 errors, 200 2xx (and 201 hits with the pre-flight)", rep.Load, hits.Load())
	}
	if rep.Load.RPS <= 0 || rep.Load.Latency.P50 <= 0 || rep.Load.Latency.P99 < rep.Load.Latency.P50 || rep.Load.Latency.Max < rep.Load.Latency.P99 {
		t.Errorf("rps %v latency %+v; want positive and ordered", rep.Load.RPS, rep.Load.Latency)
	}
	for _, f := range []string{"samples.csv", "report.json", "report.txt", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("--out: %s missing: %v", f, err)
		}
	}
}

func TestDemoFindsTheLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo soaks for 15 s")
	}
	// The test binary is not soakd: the demo re-executes a real one.
	bin := soakdBinary(t)
	start := time.Now()
	dir := t.TempDir()
	// The demo target is a Go program: its runtime grows for a few
	// seconds as the load starts (threads, heap arenas: about 6 MiB over
	// the first 2500 requests here), longer when the machine is busy. A
	// short soak excludes that warm-up, as a user of a short run would
	// (see "Limits" in docs/verdict-study.md: a warm-up that spills into
	// the soak makes it inconclusive, "slowing").
	out, err := runCmd(bin, "demo", "-q", "--json", "-d", "14s", "--warmup", "40%", "--cooldown", "3s", "--leak-bytes", "2000", "--leak-fd-every", "100", "--rate", "1000", "--interval", "250ms", "--out", dir)
	if code := exitCode(err); code != exitLeak {
		t.Fatalf("soakd demo exit code = %d (%v); want %d (leak)\n%s", code, err, exitLeak, out)
	}
	var rep struct {
		Verdict   string
		Resources map[string]struct {
			Verdict    string
			PerRequest float64 `json:"per_request"`
			Reason     string
			Series     string
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("demo --json is not JSON: %v\n%s", err, out)
	}
	rss, fds := rep.Resources["rss"], rep.Resources["fds"]
	// The demo target serves the load, so its fds are judged net of the
	// load's own connections: an open loop that meets a stall on a busy
	// machine starts workers, each with its own connection, and before
	// that their step read the fd leak as "slowing" (a CI run: 5 -> 15
	// connections).
	if fds.Series != "fds_net_of_load" {
		t.Errorf("fds judged on %q; want fds_net_of_load", fds.Series)
	}
	fdsOK := fds.Verdict == "leak"
	if rep.Verdict != "leak" || rss.Verdict != "leak" || !fdsOK {
		t.Errorf("verdicts: run %s, rss %s, fds %s; want leak for all\nrss: %s\nfds: %s", rep.Verdict, rss.Verdict, fds.Verdict, rss.Reason, fds.Reason)
		if b, err := os.ReadFile(filepath.Join(dir, "samples.csv")); err == nil {
			t.Logf("samples.csv:\n%s", b)
		}
	}
	if rss.PerRequest < 1600 || rss.PerRequest > 2400 {
		t.Errorf("rss per_request = %.0f; want 2000 ± 20 %%", rss.PerRequest)
	}
	if fds.PerRequest < 0.008 || fds.PerRequest > 0.012 {
		t.Errorf("fds per_request = %.4f; want 0.01 ± 20 %%", fds.PerRequest)
	}
	t.Logf("demo took %s", time.Since(start).Round(time.Second))
}

// The sampling, baseline and horizon flags reach the options; their
// defaults are the packages' own.
func TestParseRunSamplingBaselineAndHorizonFlags(t *testing.T) {
	o, _, err := parseRun([]string{"-n", "10", "http://a/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Interval != 0 || o.Baseline != runner.DefaultBaseline || o.Memory != verdict.MemoryThresholds || o.FDs != verdict.FDThresholds {
		t.Errorf("defaults: interval %s, baseline %s, memory %+v, fds %+v; want auto, %s and the verdict package's thresholds",
			o.Interval, o.Baseline, o.Memory, o.FDs, runner.DefaultBaseline)
	}
	o, _, err = parseRun([]string{"-n", "10", "--interval", "100ms", "--baseline", "0", "--leak-horizon", "1h",
		"--leak-horizon-growth", "8MiB", "--leak-horizon-fds", "50", "--leak-limit-share", "0.5", "--exhaustion-within", "48h", "http://a/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Interval != 100*time.Millisecond || o.Baseline >= 0 {
		t.Errorf("interval %s, baseline %s; want 100ms and skipped (< 0)", o.Interval, o.Baseline)
	}
	m, f := o.Memory, o.FDs
	if m.Horizon != 3600 || m.HorizonGrowth != 8<<20 || m.HorizonLimitShare != 0.5 || m.Exhaustion != 48*3600 ||
		f.Horizon != 3600 || f.HorizonGrowth != 50 || f.HorizonLimitShare != 0.5 || f.Exhaustion != 48*3600 {
		t.Errorf("memory %+v, fds %+v; want the flags' horizon, growth, share and exhaustion", m, f)
	}
}

// `soakd run` and a daemon job are two spellings of one runner.Spec: with
// nothing set but the URL and the request count, both give the same
// options, so no default is written twice.
func TestRunFlagsAndAJobGiveTheSameOptions(t *testing.T) {
	fromFlags, _, err := parseRun([]string{"-n", "1000", "http://127.0.0.1:8080/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	job := config.DefaultJob()
	job.Load.URL, job.Load.Requests = "http://127.0.0.1:8080/", 1000
	fromJob, err := job.Options()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFlags, fromJob) {
		t.Errorf("options differ:\nflags %+v\njob   %+v", fromFlags, fromJob)
	}
}

// Every field of runner.Spec has a flag that sets it, so each of Check's
// errors is worded as a flag (a field added without one fails here).
func TestEverySpecFieldHasAFlag(t *testing.T) {
	s := runner.DefaultSpec()
	fs := newRunFlagSet(&s, &runFlags{}, &bytes.Buffer{})
	noFlag := map[string]bool{"sampling.top_n": true} // the daemon's per-process breakdown size
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			path := prefix + name
			switch {
			case name == "-":
				continue
			case opts == "inline":
				walk(f.Type, prefix)
				continue
			case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]():
				walk(f.Type, path+".")
				continue
			}
			if got := flagOf(fs, path); got == "" && !noFlag[path] {
				t.Errorf("spec field %s has no flag of soakd run", path)
			}
		}
	}
	walk(reflect.TypeFor[runner.Spec](), "")
}

// A setting that fails only when the run uses it (a --pid that is gone)
// is worded as the flag, as a bad flag value is.
func TestRunErrorsNameTheFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-q", "-n", "10", "--pid", "999999999", "http://127.0.0.1:9/"}, &stdout, &stderr)
	if want := "soakd: --pid: 999999999: no such process"; code != exitUsage || !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, want)
	}
}
