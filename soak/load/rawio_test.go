package load

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The closed-loop tests run with blocking sockets when Concurrency <
// GOMAXPROCS (useRawIO) and on event loops above; TestPollerPath runs them
// again on the runtime's poller and TestLoopPath on event loops only, so
// every I/O path is held to the same cases.
func TestPollerPath(t *testing.T) {
	rawIOAllowed, loopIOAllowed = false, false
	t.Cleanup(func() { rawIOAllowed, loopIOAllowed = true, true })
	t.Run("ErrorCauses", TestErrorCauses)
	t.Run("Framing", TestFramingAgainstRealServer)
	t.Run("ConnectionsPerKeepAlive", TestConnectionsPerKeepAlive)
	t.Run("OpenConns", TestOpenConns)
	t.Run("Stop", TestStopByDurationAndInterrupt)
	t.Run("Timeouts", TestTimeouts)
	t.Run("StopCutsBlockedRequests", TestStopCutsBlockedRequests)
}

func TestLoopPath(t *testing.T) {
	rawIOAllowed = false
	t.Cleanup(func() { rawIOAllowed = true })
	t.Run("ErrorCauses", TestErrorCauses)
	t.Run("Framing", TestFramingAgainstRealServer)
	t.Run("ConnectionsPerKeepAlive", TestConnectionsPerKeepAlive)
	t.Run("OpenConns", TestOpenConns)
	t.Run("Stop", TestStopByDurationAndInterrupt)
	t.Run("Timeouts", TestTimeouts)
	t.Run("StopCutsBlockedRequests", TestStopCutsBlockedRequests)
	t.Run("ExactRequestCounts", TestExactRequestCounts)
	t.Run("WeightedEndpoints", TestWeightedEndpoints)
	t.Run("OnResult", TestOnResult)
	t.Run("RequestShape", TestRequestShape)
}

func TestRawIOChosen(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("blocking sockets need GOMAXPROCS >= 2")
	}
	url := "http://127.0.0.1:1/"
	for _, tt := range []struct {
		name        string
		o           Options
		raw, loop   bool
		tlsEndpoint bool
	}{
		{"c=1 closed loop", Options{Concurrency: 1}, true, false, false},
		{"c=GOMAXPROCS", Options{Concurrency: runtime.GOMAXPROCS(0)}, false, true, false},
		{"c=GOMAXPROCS with https", Options{Concurrency: runtime.GOMAXPROCS(0)}, false, false, true},
		{"open loop", Options{Concurrency: 1, Rate: 10}, false, false, false},
	} {
		tt.o.Endpoints, tt.o.Requests = endpoints(url), 1
		if tt.tlsEndpoint {
			tt.o.Endpoints = append(tt.o.Endpoints, Endpoint{URL: "https://127.0.0.1:2/"})
		}
		e, err := New(tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if e.rawIO != tt.raw || e.loopIO != tt.loop {
			t.Errorf("%s: rawIO, loopIO = %v, %v; want %v, %v", tt.name, e.rawIO, e.loopIO, tt.raw, tt.loop)
		}
	}
}

// stalled answers nothing: it reads requests until the client goes.
func stalled(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// readHeadOf reads one request head from br.
func readHeadOf(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
	}
}

// trickle answers with a 1000-byte body one byte every 20 ms, so every
// read gets data and only a whole-request timeout can stop it.
func trickle(c net.Conn) {
	br := bufio.NewReader(c)
	if readHeadOf(br) != nil {
		return
	}
	if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")); err != nil {
		return
	}
	for range 1000 {
		time.Sleep(20 * time.Millisecond)
		if _, err := c.Write([]byte("x")); err != nil {
			return
		}
	}
}

// fullBacklog returns a URL whose listener never accepts and whose accept
// queue is full, so a connect to it blocks (the SYN is dropped).
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*unix.SockaddrInet4).Port)
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return "http://" + addr + "/"
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("could not fill the accept queue of a backlog-0 listener")
	return ""
}

// Timeout bounds the whole request (connect, write, every read), not
// each system call, and a request cut at Timeout does not spoil the next.
func TestTimeouts(t *testing.T) {
	var first atomic.Bool
	stallOnce := rawServer(t, func(c net.Conn) {
		if first.CompareAndSwap(false, true) {
			stalled(c)
			return
		}
		serveStatic([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))(c)
	})
	tests := []struct {
		name      string
		url       string
		timeouts  uint64
		successes uint64
	}{
		{"no answer", rawServer(t, stalled), 3, 0},
		{"body trickles in", rawServer(t, trickle), 3, 0},
		{"connect never completes", fullBacklog(t), 3, 0},
		{"only the first stalls", stallOnce, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, Options{Endpoints: endpoints(tt.url), Requests: 3, KeepAlive: true,
				Timeout: 150 * time.Millisecond})
			if s.ErrorsByCause[CauseTimeout] != tt.timeouts || s.Successes != tt.successes || s.StoppedBy != "requests" {
				t.Errorf("got %d successes, errors %v, stopped by %s; want %d successes, %d timeouts, stopped by requests",
					s.Successes, s.ErrorsByCause, s.StoppedBy, tt.successes, tt.timeouts)
			}
		})
	}
}

// A duration stop or an interrupt cuts requests blocked in connect or
// read at once (they are abandoned, not counted), long before Timeout.
func TestStopCutsBlockedRequests(t *testing.T) {
	for _, tt := range []struct{ name, url string }{
		{"read", rawServer(t, stalled)},
		{"connect", fullBacklog(t)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, Options{Endpoints: endpoints(tt.url), KeepAlive: true, Timeout: time.Hour,
				Duration: 200 * time.Millisecond})
			if s.StoppedBy != "duration" || s.Abandoned != 1 || s.Requests != 0 {
				t.Errorf("got stopped by %s, %d abandoned, %d requests; want duration, 1, 0", s.StoppedBy, s.Abandoned, s.Requests)
			}
			e, err := New(Options{Endpoints: endpoints(tt.url), KeepAlive: true, Timeout: time.Hour, Duration: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			if s, err = e.Run(ctx); err != nil || s.StoppedBy != "interrupt" || s.Abandoned != 1 {
				t.Errorf("got %v, stopped by %s, %d abandoned; want interrupt, 1", err, s.StoppedBy, s.Abandoned)
			}
		})
	}
}
