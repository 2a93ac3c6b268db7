package daemon

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/soakd/soakd/soak/config"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Sync() error { return nil }

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLoadURLSecretsNeverShown: a load URL with a password and a query
// value: neither appears in the API, the web pages, the report or the
// log of a run.
func TestLoadURLSecretsNeverShown(t *testing.T) {
	t.Parallel()
	tg := startTarget(t)
	dir := t.TempDir()
	j := jobSpec{name: "web", target: tg, duration: 2 * time.Second}
	yaml := strings.Replace(configYAML(dir, "", j), "url: http://"+tg.addr+"/",
		"url: http://user:PASSW0RD@"+tg.addr+"/?apikey=SECRET123", 1)
	// No target section: the target is found by the URL's port, and the
	// job is described by its URL.
	yaml = strings.Replace(yaml, "    target:\n      pidfile: "+tg.pidFile+"\n", "", 1)
	if !strings.Contains(yaml, "PASSW0RD") || strings.Contains(yaml, "pidfile") {
		t.Fatalf("the test config lacks the secret URL:\n%s", yaml)
	}
	var logs syncBuffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), &logs, zap.DebugLevel))
	d := startDaemon(t, parseConfig(t, yaml), Options{Log: log})
	id := startRun(t, d.url, "web", "")
	waitFor(t, 60*time.Second, "the run to end", func() bool {
		return runStatus(t, d.url, "web", id).Status != "running"
	})
	shown := map[string]string{"log": logs.String()}
	for _, path := range []string{"/api/v1/jobs", "/api/v1/runs", "/api/v1/runs/" + itoa(id), "/", "/runs/" + itoa(id)} {
		_, b := httpDo(t, "GET", d.url+path, "", nil)
		shown["GET "+path] = string(b)
	}
	if !strings.Contains(shown["GET /api/v1/jobs"], "REDACTED@"+tg.addr) {
		t.Errorf("GET /api/v1/jobs does not show the redacted URL: %s", shown["GET /api/v1/jobs"])
	}
	for where, text := range shown {
		for _, secret := range []string{"PASSW0RD", "SECRET123"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s", where, secret)
			}
		}
	}
}

// TestAuthAll: with auth: all every read needs the token too (bearer, or
// a browser's Basic password), except the health checks; the default is
// "all" off loopback and "writes" on it.
func TestAuthAll(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	cfg := parseConfig(t, configYAML(t.TempDir(), "token: "+token+"\nauth: all\n", jobSpec{name: "web", target: tg}))
	d := startDaemon(t, cfg, Options{})
	for _, c := range []struct {
		path, token string
		basic       bool
		want        int
	}{
		{"/api/v1/jobs", "", false, http.StatusUnauthorized},
		{"/api/v1/runs", "nope", false, http.StatusUnauthorized},
		{"/", "", false, http.StatusUnauthorized},
		{"/metrics", "", false, http.StatusUnauthorized},
		{"/healthz", "", false, http.StatusOK},
		{"/readyz", "", false, http.StatusOK},
		{"/api/v1/jobs", token, false, http.StatusOK},
		{"/", token, true, http.StatusOK},
		{"/metrics", token, false, http.StatusOK},
	} {
		req, err := http.NewRequest("GET", d.url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.basic:
			req.SetBasicAuth("anyone", c.token)
		case c.token != "":
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s (token %q, basic %v): status %d; want %d", c.path, c.token, c.basic, resp.StatusCode, c.want)
		}
		if c.want == http.StatusUnauthorized && len(resp.Header.Values("WWW-Authenticate")) != 2 {
			t.Errorf("GET %s: WWW-Authenticate %q; want a Bearer and a Basic challenge", c.path, resp.Header.Values("WWW-Authenticate"))
		}
	}

	for _, c := range []struct{ listen, auth, want string }{
		{"127.0.0.1:7797", "", config.AuthWrites},
		{"0.0.0.0:7797", "", config.AuthAll},
		{"0.0.0.0:7797", config.AuthWrites, config.AuthWrites},
	} {
		cfg := &config.Config{Listen: c.listen, Auth: c.auth}
		if got := cfg.EffectiveAuth(); got != c.want {
			t.Errorf("listen %s, auth %q: effective %q; want %q", c.listen, c.auth, got, c.want)
		}
	}
	if _, err := config.Parse("x.yaml", []byte("auth: all\njobs: []\n")); err == nil || !strings.Contains(err.Error(), "auth") {
		t.Errorf("auth: all without a token: got %v; want an error naming auth", err)
	}
}
