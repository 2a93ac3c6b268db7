// Command faultd is the fault suite's broken HTTP/1.1 server: one small
// program, stdlib only, that fails in the way its -mode says, so that
// soakd's tests can check the verdict and exit code each fault must get.
//
// It listens on 127.0.0.1:0 (or -addr), writes "HOST:PORT\n" to
// --port-file and prints it, and exits on SIGTERM or SIGINT, or by itself
// after --max-lifetime. Its randomness is a hash of -seed and the
// request's number, so the same requests fail in every run.
//
// Modes:
//
//	ok         every request 200 (the SIGSTOP test stops and resumes it)
//	status500  every request 500 Internal Server Error
//	status404  every request 404 Not Found
//	rising     500 with a probability rising linearly from 0 to -max-rate
//	           over -ramp (a number of requests, or a duration such as 10s)
//	hang       accept, read the request, never answer
//	halfhang   answer the even-numbered requests, hang the odd ones
//	reset      with probability -p, write the status line, then reset the
//	           connection (SO_LINGER 0 and close: an RST, not a FIN)
//	http10     answer HTTP/1.0 without Content-Length and close: the body
//	           ends where the connection does (data and FIN together)
//	emfile     never close a connection (one fd leaked per request), with
//	           RLIMIT_NOFILE set so that accept fails with EMFILE after
//	           -conns connections
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:])) }

// config is faultd's flags.
type config struct {
	mode     string
	addr     string
	portFile string
	pidFile  string
	seed     uint64
	p        float64
	maxRate  float64
	ramp     string
	conns    int
	lifetime time.Duration
}

// server is one faultd: its mode's settings and its request counter.
type server struct {
	cfg      config
	start    time.Time
	rampN    uint64        // rising: ramp over this many requests, or
	rampD    time.Duration // over this long
	requests atomic.Uint64 // requests read so far; the next one's number
	leakedMu sync.Mutex
	leaked   []net.Conn // emfile: connections never closed
}

var modes = map[string]bool{
	"ok": true, "status500": true, "status404": true, "rising": true,
	"hang": true, "halfhang": true, "reset": true, "http10": true, "emfile": true,
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("faultd", flag.ContinueOnError)
	fs.StringVar(&c.mode, "mode", "ok", "ok, status500, status404, rising, hang, halfhang, reset, http10 or emfile")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:0", "listen address")
	fs.StringVar(&c.portFile, "port-file", "", "write HOST:PORT and a newline to this file once listening")
	fs.StringVar(&c.pidFile, "pid-file", "", "write the PID to this file")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random choices")
	fs.Float64Var(&c.p, "p", 0.01, "reset: the probability that a request's connection is reset")
	fs.Float64Var(&c.maxRate, "max-rate", 0.2, "rising: the error rate reached at the end of -ramp")
	fs.StringVar(&c.ramp, "ramp", "2000", "rising: the ramp's length, in requests (2000) or as a duration (10s)")
	fs.IntVar(&c.conns, "conns", 200, "emfile: connections accepted before accept fails with EMFILE")
	fs.DurationVar(&c.lifetime, "max-lifetime", 10*time.Minute, "exit after this long, whatever happens")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if !modes[c.mode] {
		return c, fmt.Errorf("-mode %q: want one of ok, status500, status404, rising, hang, halfhang, reset, http10, emfile", c.mode)
	}
	if c.p < 0 || c.p > 1 || c.maxRate < 0 || c.maxRate > 1 {
		return c, fmt.Errorf("-p %g, -max-rate %g: each must be within 0..1", c.p, c.maxRate)
	}
	if c.conns < 1 {
		return c, fmt.Errorf("-conns %d: must be >= 1", c.conns)
	}
	return c, nil
}

func run(args []string) int {
	cfg, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultd:", err)
		return 2
	}
	s := &server{cfg: cfg, start: time.Now()}
	if err := s.parseRamp(); err != nil {
		fmt.Fprintln(os.Stderr, "faultd:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.lifetime)
	defer cancel()
	if err := s.serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "faultd:", err)
		return 1
	}
	return 0
}

func (s *server) parseRamp() error {
	if s.cfg.mode != "rising" {
		return nil
	}
	if n, err := strconv.ParseUint(s.cfg.ramp, 10, 64); err == nil && n > 0 {
		s.rampN = n
		return nil
	}
	if d, err := time.ParseDuration(s.cfg.ramp); err == nil && d > 0 {
		s.rampD = d
		return nil
	}
	return fmt.Errorf("-ramp %q: want a number of requests (2000) or a duration (10s), > 0", s.cfg.ramp)
}

// serve listens, announces the address and accepts until ctx ends.
func (s *server) serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w", s.cfg.addr, err)
	}
	defer ln.Close()
	if s.cfg.mode == "emfile" {
		if err := limitFDs(s.cfg.conns); err != nil {
			return err
		}
	}
	if err := s.announce(ln.Addr().String()); err != nil {
		return err
	}
	go func() { <-ctx.Done(); ln.Close() }()
	return s.acceptLoop(ctx, ln)
}

func (s *server) announce(addr string) error {
	if s.cfg.pidFile != "" {
		if err := os.WriteFile(s.cfg.pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return fmt.Errorf("--pid-file: %w", err)
		}
	}
	if s.cfg.portFile != "" {
		// Written whole, then renamed: a reader never sees half a line.
		tmp := s.cfg.portFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(addr+"\n"), 0o644); err != nil {
			return fmt.Errorf("--port-file: %w", err)
		}
		if err := os.Rename(tmp, s.cfg.portFile); err != nil {
			return fmt.Errorf("--port-file: %w", err)
		}
	}
	fmt.Printf("faultd %s listening on %s\n", s.cfg.mode, addr)
	return nil
}

// acceptLoop serves each connection in a goroutine of its own. An accept
// that fails for want of file descriptors is retried after a pause, as
// net/http does, so the connections wait in the kernel's backlog.
func (s *server) acceptLoop(ctx context.Context, ln net.Listener) error {
	pause := 5 * time.Millisecond
	warned := false
	for {
		conn, err := ln.Accept()
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			if !warned {
				fmt.Fprintf(os.Stderr, "faultd: accept: %v; retrying\n", err)
				warned = true
			}
			time.Sleep(pause)
			pause = min(2*pause, 200*time.Millisecond)
			continue
		}
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		pause = 5 * time.Millisecond
		go s.handle(ctx, conn)
	}
}

// limitFDs sets RLIMIT_NOFILE to the descriptors open now plus n, so that
// the (n+1)th connection kept open makes accept fail with EMFILE.
func limitFDs(n int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("emfile: counting open fds: %w", err)
	}
	// ReadDir's own descriptor is closed again: not counted.
	open := uint64(len(ents) - 1)
	lim := syscall.Rlimit{Cur: open + uint64(n), Max: open + uint64(n)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("emfile: setting RLIMIT_NOFILE to %d: %w", lim.Cur, err)
	}
	return nil
}

// handle reads requests off conn and answers each as the mode says.
func (s *server) handle(ctx context.Context, conn net.Conn) {
	keep := false
	defer func() {
		if !keep {
			conn.Close()
		}
	}()
	br := bufio.NewReader(conn)
	for ctx.Err() == nil {
		if err := readRequest(br); err != nil {
			if errors.Is(err, errBadRequest) {
				conn.Write(answerBadRequest)
			}
			return
		}
		i := s.requests.Add(1) - 1
		switch s.action(i) {
		case actAnswer:
			if _, err := conn.Write(answerOK); err != nil {
				return
			}
		case actFail:
			if _, err := conn.Write(answerFail); err != nil {
				return
			}
		case actNotFound:
			if _, err := conn.Write(answerNotFound); err != nil {
				return
			}
		case actHang:
			s.hang(ctx, conn, br)
			return
		case actReset:
			resetConn(conn)
			return
		case actHTTP10:
			conn.Write(answerHTTP10)
			return
		case actLeak:
			// Answered, then kept open for ever: the leak.
			if _, err := conn.Write(answerOKClose); err == nil {
				s.leak(conn)
				keep = true
			}
			return
		}
	}
}

type action int

const (
	actAnswer action = iota
	actFail
	actNotFound
	actHang
	actReset
	actHTTP10
	actLeak
)

// action is what request number i gets.
func (s *server) action(i uint64) action {
	switch s.cfg.mode {
	case "status500":
		return actFail
	case "status404":
		return actNotFound
	case "rising":
		if chance(s.cfg.seed, i) < s.risingRate(i) {
			return actFail
		}
	case "hang":
		return actHang
	case "halfhang":
		if i%2 == 1 {
			return actHang
		}
	case "reset":
		if chance(s.cfg.seed, i) < s.cfg.p {
			return actReset
		}
	case "http10":
		return actHTTP10
	case "emfile":
		return actLeak
	}
	return actAnswer
}

// risingRate is the error rate for request i: 0 at the start, -max-rate
// at the end of the ramp and after.
func (s *server) risingRate(i uint64) float64 {
	f := 1.0
	if s.rampN > 0 {
		f = min(float64(i)/float64(s.rampN), 1)
	} else {
		f = min(float64(time.Since(s.start))/float64(s.rampD), 1)
	}
	return f * s.cfg.maxRate
}

// chance is a number in [0, 1) that depends only on seed and i
// (splitmix64), so request i fails or not in every run alike.
func chance(seed, i uint64) float64 {
	z := seed*0x9e3779b97f4a7c15 + i + 1
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// hang holds conn open without answering until the client closes it or
// faultd stops.
func (s *server) hang(ctx context.Context, conn net.Conn, br *bufio.Reader) {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, br) // returns once the client closes
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (s *server) leak(conn net.Conn) {
	s.leakedMu.Lock()
	defer s.leakedMu.Unlock()
	s.leaked = append(s.leaked, conn)
}

// resetConn writes a status line, as a server that crashes mid-answer
// would, and resets the connection: SO_LINGER 0 makes close send an RST.
// The status line comes first so that the client has read a byte of the
// answer and cannot retry the request on another connection unseen.
func resetConn(conn net.Conn) {
	io.WriteString(conn, "HTTP/1.1 200 OK\r\n")
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// readRequest reads one request's head and discards its body (by
// Content-Length; chunked bodies are not supported). It allocates
// nothing, so that faultd's own memory stays flat under load and a fault
// row's resource verdicts are about the fault.
func readRequest(br *bufio.Reader) error {
	b, err := br.Peek(1)
	if err != nil {
		return err
	}
	if (b[0] < 'A' || b[0] > 'Z') && b[0] != '\r' && b[0] != '\n' {
		return errBadRequest
	}
	length := int64(0)
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err // a head line over 4 KiB (bufio.ErrBufferFull) included
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if first {
				continue // a stray CRLF between requests
			}
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			if length, err = parseLength(bytes.TrimSpace(value)); err != nil {
				return err
			}
		}
	}
	_, err = br.Discard(int(length))
	return err
}

// parseLength parses a Content-Length value without allocating.
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 || len(v) > 12 {
		return 0, errors.New("bad Content-Length")
	}
	n := int64(0)
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, errors.New("bad Content-Length")
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// errBadRequest is a request that does not start with a method: faultd
// answers it with 400 and closes, as nginx does (a TLS ClientHello sent
// to the plain port gets this answer).
var errBadRequest = errors.New("not an HTTP request")

// Whole answers, made once.
var (
	answerBadRequest = response(400, "Bad Request", true)
	answerOK         = response(200, "OK", false)
	answerOKClose    = response(200, "OK", true)
	answerFail       = response(500, "Internal Server Error", false)
	answerNotFound   = response(404, "Not Found", false)
	// answerHTTP10's body is delimited by the close.
	answerHTTP10 = []byte("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n200 OK\n")
)

// response is a whole answer with a short body; closing says
// "Connection: close".
func response(code int, reason string, closing bool) []byte {
	body := fmt.Sprintf("%d %s\n", code, reason)
	conn := ""
	if closing {
		conn = "Connection: close\r\n"
	}
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n%s",
		code, reason, len(body), conn, body)
}
