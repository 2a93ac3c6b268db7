package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// job is a minimal valid job with extra lines under it.
func job(extra string) string {
	return "jobs:\n  - name: web\n    schedule: '@daily'\n    load:\n      url: http://127.0.0.1:8080/\n      duration: 1h\n" + extra
}

func TestGoodConfigs(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, c *Config)
	}{
		{"token file beside the config", "listen: 0.0.0.0:7797\ntoken_file: token.txt\n" + job(""), func(t *testing.T, c *Config) {
			tok, err := c.Token()
			if err != nil || tok != "s3cret" {
				t.Errorf("Token() = %q, %v; want s3cret", tok, err)
			}
			if c.ListenIsLoopback() {
				t.Error("0.0.0.0 is loopback; want not")
			}
		}},
		{"until decided: the load's most from max_duration", "jobs:\n  - name: web\n    schedule: '@every 2m'\n    until_decided: true\n    max_duration: 10m\n    phases: {cooldown: 30s}\n    load:\n      url: http://127.0.0.1:8080/\n", func(t *testing.T, c *Config) {
			j := c.Jobs[0]
			o, err := j.Options()
			if err != nil {
				t.Fatal(err)
			}
			// 10m less a tenth, the default 3s baseline, the 30s cool-down and the default 10s ready timeout.
			if !o.UntilDecided || o.Load.Duration != 8*time.Minute+17*time.Second || j.MaxDuration != 10*time.Minute {
				t.Errorf("until decided %v, load duration %s, max_duration %s; want true, 8m17s, 10m", o.UntilDecided, o.Load.Duration, j.MaxDuration)
			}
		}},
		{"until decided with a load duration keeps it", strings.Replace(job("    until_decided: true\n    max_duration: 2h\n"), "duration: 1h", "duration: 30m", 1), func(t *testing.T, c *Config) {
			o, err := c.Jobs[0].Options()
			if err != nil || !o.UntilDecided || o.Load.Duration != 30*time.Minute {
				t.Errorf("until decided %v, load duration %s, %v; want true, 30m", o.UntilDecided, o.Load.Duration, err)
			}
		}},
		{"inline token on ::", "listen: '[::]:7797'\ntoken: abc\n" + job(""), func(t *testing.T, c *Config) {
			if tok, _ := c.Token(); tok != "abc" {
				t.Errorf("Token() = %q; want abc", tok)
			}
		}},
		{"targets file with a body", strings.Replace(job(""), "url: http://127.0.0.1:8080/", "targets_file: targets.txt", 1), func(t *testing.T, c *Config) {
			o, err := c.Jobs[0].Options()
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Load.Endpoints) != 2 || string(o.Load.Endpoints[1].Body) != `{"a":1}` || o.Load.Endpoints[1].Weight != 2 {
				t.Errorf("endpoints = %+v; want GET and POST with the body file", o.Load.Endpoints)
			}
			if o.Target.URL != "http://127.0.0.1:8080/" {
				t.Errorf("target URL = %q; want the first endpoint's", o.Target.URL)
			}
		}},
		{"body file, headers, checks", job("      method: POST\n      body: '@body.json'\n      headers: ['X-Token: abc']\n      expect_status: [200, 3xx]\n      expect_body: ok\n"), func(t *testing.T, c *Config) {
			o, err := c.Jobs[0].Options()
			if err != nil {
				t.Fatal(err)
			}
			ep := o.Load.Endpoints[0]
			if ep.Method != "POST" || string(ep.Body) != `{"a":1}` || len(o.Load.Headers) != 1 || o.Load.Headers[0].Value != "abc" ||
				o.Load.ExpectBody == nil || len(o.Load.ExpectStatus) != 2 {
				t.Errorf("load options = %+v", o.Load)
			}
		}},
		{"no smaps, warm-up by requests, thresholds", job("    sampling: {smaps: false}\n    phases: {warmup: '5000', cooldown: 30s}\n    thresholds: {mem_limit: 2GiB, leak_min_growth: 4MiB, alpha: 0.01}\n"), func(t *testing.T, c *Config) {
			o, err := c.Jobs[0].Options()
			if err != nil {
				t.Fatal(err)
			}
			if o.Sampler.SmapsInterval >= 0 || o.Warmup.Requests != 5000 || o.Cooldown != 30*time.Second ||
				o.MemLimit != 2<<30 || o.Memory.MinTotal != 4<<20 || o.Memory.Alpha != 0.01 || o.FDs.Alpha != 0.01 {
				t.Errorf("options = %+v", o)
			}
		}},
		{"exec target", job("    target: {exec: './server --port 8080', exec_log: server.log, stop_grace: 1s}\n"), func(t *testing.T, c *Config) {
			o, _ := c.Jobs[0].Options()
			if o.Target.Exec != "./server --port 8080" || o.Target.StopGrace != time.Second || o.Target.ExecLog != filepath.Join("testdata", "good", "server.log") {
				t.Errorf("target = %+v", o.Target)
			}
		}},
		{"alias reuses a load", "jobs:\n  - name: a\n    schedule: '@daily'\n    load: &l {url: 'http://127.0.0.1:8080/', duration: 1h, concurrency: 3}\n  - name: b\n    schedule: '@hourly'\n    load: *l\n", func(t *testing.T, c *Config) {
			if c.Jobs[1].Load.Concurrency != 3 || c.Jobs[1].Load.Timeout != 30*time.Second {
				t.Errorf("job b load = %+v; want a's, with defaults", c.Jobs[1].Load)
			}
		}},
		{"no jobs", "listen: 127.0.0.1:0\n", func(t *testing.T, c *Config) {
			if len(c.Jobs) != 0 {
				t.Errorf("got %d jobs; want 0", len(c.Jobs))
			}
		}},
		{"alert zeros take the defaults, jobs or none", "alerts: {repeat_interval: 0s, queue_size: 0}\n", func(t *testing.T, c *Config) {
			if c.Alerts.RepeatInterval <= 0 || c.Alerts.QueueSize < 1 {
				t.Errorf("repeat_interval %v, queue_size %d; want the defaults", c.Alerts.RepeatInterval, c.Alerts.QueueSize)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(filepath.Join("testdata", "good", "soakd.yaml"), []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestRemoteJob(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "soakd.yaml")
	os.WriteFile(path, []byte(job(`    target:
      remote:
        prometheus_url: http://127.0.0.1:9090
        selector: '{pod="api-7d9c"}'
        metrics: ['heap_bytes=jvm_memory_used_bytes{area="heap"}']
        bearer_token_file: token
        ca_file: ca.pem
`)), 0o600)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Jobs[0].Options()
	if err != nil {
		t.Fatal(err)
	}
	r := o.Remote
	if r.PrometheusURL != "http://127.0.0.1:9090" || r.Selector != `{pod="api-7d9c"}` || len(r.Metrics) != 1 {
		t.Errorf("Options().Remote = %+v; want the job's target.remote", r)
	}
	for name, got := range map[string]string{"bearer_token_file": r.BearerTokenFile, "ca_file": r.CAFile} {
		if got != filepath.Join(dir, filepath.Base(got)) {
			t.Errorf("%s = %q; want it under %s", name, got, dir)
		}
	}
}

func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "token"), []byte("t0k\n"), 0o600)
	path := filepath.Join(dir, "soakd.yaml")
	os.WriteFile(path, []byte("state_dir: state\ntoken_file: token\n"+job("    target: {pidfile: run/x.pid}\n")), 0o600)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"state_dir": c.StateDir, "token_file": c.TokenFile, "pidfile": c.Jobs[0].Target.PIDFile} {
		if !strings.HasPrefix(got, dir) {
			t.Errorf("%s = %q; want it under %s", name, got, dir)
		}
	}
}

func TestCronScheduleTimezone(t *testing.T) {
	tests := []struct {
		schedule, tz string
		from, want   time.Time
	}{
		{"0 2 * * *", "Europe/Berlin", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)},
		{"0 2 * * *", "UTC", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)},
		{"@daily", "America/New_York", time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)},
		{"@every 6h", "Asia/Tokyo", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.schedule+" "+tt.tz, func(t *testing.T) {
			j := Job{Name: "web", Schedule: tt.schedule, Timezone: tt.tz}
			s, err := j.CronSchedule()
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(tt.from); !got.Equal(tt.want) {
				t.Errorf("Next(%v) = %v; want %v", tt.from, got.UTC(), tt.want)
			}
		})
	}
}

func TestListenIsLoopback(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:7797": true, "127.1.2.3:1": true, "[::1]:7797": true, "localhost:7797": true,
		"0.0.0.0:7797": false, ":7797": false, "[::]:7797": false, "192.0.2.1:7797": false, "junk": false,
	} {
		c := Config{Listen: listen}
		if got := c.ListenIsLoopback(); got != want {
			t.Errorf("ListenIsLoopback(%q) = %v; want %v", listen, got, want)
		}
	}
}

// FuzzParse: the seeds are small on purpose; the fuzzer stalls on the
// 6 KB example config.
func FuzzParse(f *testing.F) {
	f.Add([]byte(job("    target: {pid: 1}\n    phases: {warmup: 10%}\n")))
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err == nil && c == nil {
			t.Fatal("Parse: nil config and nil error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yaml") {
			t.Fatalf("error %q does not start with the file name", err)
		}
	})
}
