package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// closedPort returns a loopback address on which nothing listens: a port
// taken from :0 and released.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestAlertTestNamesEveryFailedSink: with one sink that delivers and
// three that fail (a webhook answering 500, a webhook on a closed port,
// an Alertmanager pair with one peer down), `soakd alert test` exits
// exitAlertFailed and names each failed sink with its error; with the
// good ones only it exits 0.
func TestAlertTestNamesEveryFailedSink(t *testing.T) {
	var delivered atomic.Int32
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { delivered.Add(1) }))
	t.Cleanup(good.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "receiver broken", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	down := "http://" + closedPort(t) + "/"
	sink := func(name, typ, where string) string {
		return "    - name: " + name + "\n      type: " + typ + "\n      " + where + "\n      timeout: 5s\n"
	}
	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed.yaml")
	writeFile(t, mixed, "alerts:\n  sinks:\n"+
		sink("hook", "webhook", "url: "+good.URL)+
		sink("broken", "webhook", "url: "+failing.URL)+
		sink("down", "webhook", "url: "+down)+
		sink("pair", "alertmanager", "urls: ['"+good.URL+"', '"+down+"']")+serveTestJob)
	allGood := filepath.Join(dir, "good.yaml")
	writeFile(t, allGood, "alerts:\n  sinks:\n"+sink("hook", "webhook", "url: "+good.URL)+
		sink("pair", "alertmanager", "urls: ['"+good.URL+"', '"+good.URL+"/']")+serveTestJob)

	var stdout, stderr bytes.Buffer
	code := cmdAlert([]string{"test", "--config", mixed}, &stdout, &stderr)
	if code != exitAlertFailed {
		t.Errorf("3 of 4 sinks failing: exit code %d; want %d\nstdout: %s\nstderr: %s", code, exitAlertFailed, stdout.String(), stderr.String())
	}
	for _, want := range []string{"3 of 4 sinks failed", "broken (webhook)", "status 500", "down (webhook)", "connection refused", "pair (alertmanager)", "1 of 2 URLs failed"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not name %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "hook (webhook)") {
		t.Errorf("stderr names the sink that delivered:\n%s", stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := cmdAlert([]string{"test", "--config", allGood}, &stdout, &stderr); code != exitOK {
		t.Errorf("every sink delivering: exit code %d; want 0\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	// mixed: hook and one peer of pair; good: hook and both peers of pair.
	if n := delivered.Load(); n != 5 {
		t.Errorf("the good receiver got %d test alerts; want 5", n)
	}
}
