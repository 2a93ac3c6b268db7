package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// start serves mode (with more flags) in this process on a loopback port
// until the test ends, and returns its address. Not for -mode emfile: it
// would set this test binary's own fd limit.
func start(t *testing.T, args ...string) string {
	t.Helper()
	portFile := filepath.Join(t.TempDir(), "port")
	cfg, err := parseFlags(append(args, "--port-file", portFile))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cfg: cfg, start: time.Now()}
	if err := s.parseRamp(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(portFile); err == nil {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("faultd wrote no port file within 30 s")
	return ""
}

// client is one keep-alive connection to faultd.
type client struct {
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, br: bufio.NewReader(c)}
}

// get sends a GET and reads the answer's status code within timeout.
func (cl *client) get(timeout time.Duration) (int, error) {
	cl.c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(cl.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(cl.br, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// TestModesAnswer: each fixed mode answers every request on a keep-alive
// connection with its status.
func TestModesAnswer(t *testing.T) {
	for mode, want := range map[string]int{"ok": 200, "status500": 500, "status404": 404} {
		t.Run(mode, func(t *testing.T) {
			cl := dial(t, start(t, "-mode", mode))
			for i := range 3 {
				if got, err := cl.get(30 * time.Second); err != nil || got != want {
					t.Fatalf("request %d: status %d, %v; want %d", i, got, err, want)
				}
			}
		})
	}
}

// TestRising: over a ramp of 2000 requests the error rate goes from about
// 0 to about 20 %: the first 500 requests fail less than the last 500.
func TestRising(t *testing.T) {
	cl := dial(t, start(t, "-mode", "rising", "-ramp", "2000", "-max-rate", "0.2"))
	var first, last int
	for i := range 2000 {
		code, err := cl.get(30 * time.Second)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if code == 500 && i < 500 {
			first++
		}
		if code == 500 && i >= 1500 {
			last++
		}
	}
	// Expected: about 500 × 2.5 % = 12 and 500 × 17.5 % = 88.
	if first > 30 || last < 60 || last > 120 {
		t.Errorf("500s: %d in the first 500 requests, %d in the last 500; want about 12 and 88", first, last)
	}
}

// TestHang: the request is read and never answered; not a byte comes.
func TestHang(t *testing.T) {
	cl := dial(t, start(t, "-mode", "hang"))
	if _, err := cl.get(300 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err %v; want a timeout", err)
	}
	if n := cl.br.Buffered(); n != 0 {
		t.Errorf("%d bytes received; want 0", n)
	}
}

// TestHalfHang: request 0 is answered, request 1 hangs.
func TestHalfHang(t *testing.T) {
	addr := start(t, "-mode", "halfhang")
	cl := dial(t, addr)
	if code, err := cl.get(30 * time.Second); err != nil || code != 200 {
		t.Fatalf("request 0: status %d, %v; want 200", code, err)
	}
	if _, err := cl.get(300 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("request 1: err %v; want a timeout", err)
	}
	if code, err := dial(t, addr).get(30 * time.Second); err != nil || code != 200 {
		t.Fatalf("request 2: status %d, %v; want 200", code, err)
	}
}

// TestReset: with -p 1 every request gets a status line and then an RST.
// The connection is read raw: http.ReadResponse would turn the reset into
// io.ErrUnexpectedEOF (textproto peeks, and the peek eats the error).
func TestReset(t *testing.T) {
	cl := dial(t, start(t, "-mode", "reset", "-p", "1"))
	cl.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(cl.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(cl.c)
	if string(got) != "HTTP/1.1 200 OK\r\n" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %q, %v; want the status line, then %v", got, err, syscall.ECONNRESET)
	}
}

// TestBadRequest: what does not start like a request (here a TLS
// ClientHello's first bytes) gets 400 and a close, as from nginx.
func TestBadRequest(t *testing.T) {
	cl := dial(t, start(t, "-mode", "ok"))
	cl.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := cl.c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(cl.br, nil)
	if err != nil || resp.StatusCode != 400 || !resp.Close {
		t.Fatalf("answer %+v, %v; want 400 and Connection: close", resp, err)
	}
}

// TestHTTP10: an HTTP/1.0 answer without Content-Length, then a close.
func TestHTTP10(t *testing.T) {
	cl := dial(t, start(t, "-mode", "http10"))
	cl.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(cl.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(cl.c)
	if err != nil || !strings.HasPrefix(string(got), "HTTP/1.0 200 OK\r\n") || strings.Contains(string(got), "Content-Length") {
		t.Fatalf("read %q, %v; want an HTTP/1.0 answer without Content-Length, then EOF", got, err)
	}
}

// TestChance: the same seed and request number give the same number, and
// the numbers are uniform enough for the error rates above.
func TestChance(t *testing.T) {
	if chance(7, 42) != chance(7, 42) || chance(7, 42) == chance(8, 42) {
		t.Fatal("chance is not a function of seed and request number alone")
	}
	const n = 100000
	below := 0
	for i := range uint64(n) {
		if chance(1, i) < 0.01 {
			below++
		}
	}
	if below < 800 || below > 1200 {
		t.Errorf("%d of %d below 0.01; want about 1000", below, n)
	}
}

// TestFlags: bad flags are refused with the flag's name.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-mode", "nope"}, {"-p", "2"}, {"-conns", "0"}} {
		if _, err := parseFlags(args); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: err %v; want one that names %s", args, err, args[0])
		}
	}
	s := &server{cfg: config{mode: "rising", ramp: "soon"}}
	if err := s.parseRamp(); err == nil || !strings.Contains(err.Error(), "-ramp") {
		t.Errorf("-ramp soon: err %v; want one that names -ramp", err)
	}
}
