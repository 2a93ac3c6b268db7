package load

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
)

// testServer is an httptest server that counts requests and accepted
// connections.
type testServer struct {
	*httptest.Server
	requests atomic.Int64
	conns    atomic.Int64
}

func newTestServer(t *testing.T, h http.HandlerFunc) *testServer {
	t.Helper()
	ts := &testServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.requests.Add(1)
		h(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ts.conns.Add(1)
		}
	}
	srv.Start()
	ts.Server = srv
	t.Cleanup(srv.Close)
	return ts
}

func okHandler(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("hello"))
}

// run builds an engine from o and runs it with a generous deadline.
func run(t *testing.T, o Options) *Summary {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := e.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return s
}

func endpoints(url string) []Endpoint { return []Endpoint{{URL: url}} }

// rawServer accepts connections on 127.0.0.1:0 and hands each to serve
// (soaktest.RawServer).
func rawServer(t testing.TB, serve func(net.Conn)) string { return soaktest.RawServer(t, serve) }

// serveStatic answers every request on c with resp until c closes. It
// reads headers only, so requests must have no body.
func serveStatic(resp []byte) func(net.Conn) {
	return func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(bytes.TrimSpace(line)) == 0 {
					break
				}
			}
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	}
}

// closedPort returns a URL on a loopback port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}
