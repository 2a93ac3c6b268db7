package soaktest_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
)

// upstream is a real HTTP server on loopback that answers "ok".
func upstream(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// get sends one request on br/c and reads its answer, within timeout.
func get(c net.Conn, br *bufio.Reader, timeout time.Duration) (*http.Response, error) {
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// TestFaultProxyLatency: every answer comes at least Latency − Jitter
// late. Only the lower bound is checked: a busy machine adds, never
// takes away.
func TestFaultProxyLatency(t *testing.T) {
	p := soaktest.StartFaultProxy(t, upstream(t), soaktest.Toxics{Latency: 50 * time.Millisecond, Jitter: 10 * time.Millisecond, Seed: 1})
	c, br := dial(t, p.Addr)
	for i := range 5 {
		start := time.Now()
		if _, err := get(c, br, 30*time.Second); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if took := time.Since(start); took < 40*time.Millisecond {
			t.Errorf("request %d took %v; want ≥ 40ms (50ms ± 10ms)", i, took)
		}
	}
}

// TestFaultProxyStall: with StallEvery 3, the third request on the
// connection is lost and the connection hears nothing more; a new
// connection is served again.
func TestFaultProxyStall(t *testing.T) {
	p := soaktest.StartFaultProxy(t, upstream(t), soaktest.Toxics{StallEvery: 3})
	c, br := dial(t, p.Addr)
	for i := range 2 {
		if _, err := get(c, br, 30*time.Second); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	_, err := get(c, br, 300*time.Millisecond)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third request: err %v; want a timeout (stalled)", err)
	}
	if got := p.Stalled.Load(); got != 1 {
		t.Errorf("Stalled = %d; want 1", got)
	}
	c2, br2 := dial(t, p.Addr)
	if _, err := get(c2, br2, 30*time.Second); err != nil {
		t.Fatalf("a new connection after the stall: %v", err)
	}
}

// TestFaultProxyReset: with ResetEvery 2, the second answer is an RST.
func TestFaultProxyReset(t *testing.T) {
	p := soaktest.StartFaultProxy(t, upstream(t), soaktest.Toxics{ResetEvery: 2})
	c, br := dial(t, p.Addr)
	if _, err := get(c, br, 30*time.Second); err != nil {
		t.Fatalf("first request: %v", err)
	}
	_, err := get(c, br, 30*time.Second)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("second request: err %v; want %v", err, syscall.ECONNRESET)
	}
	if got := p.Reset.Load(); got != 1 {
		t.Errorf("Reset = %d; want 1", got)
	}
}

// TestFaultProxySlowClose: the client's connection closes no sooner than
// SlowClose after the upstream closed its own.
func TestFaultProxySlowClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		if c, err := ln.Accept(); err == nil {
			fmt.Fprint(c, "bye\n")
			c.Close()
		}
	}()
	p := soaktest.StartFaultProxy(t, ln.Addr().String(), soaktest.Toxics{SlowClose: 200 * time.Millisecond})
	// From before the dial: the proxy may reach the upstream's EOF, and
	// start its wait, before the dial returns here.
	start := time.Now()
	c, _ := dial(t, p.Addr)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "bye\n" {
		t.Fatalf("read %q, %v; want \"bye\\n\" then EOF", b, err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("closed after %v; want ≥ 200ms", took)
	}
}
