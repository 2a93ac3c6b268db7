package daemon

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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
