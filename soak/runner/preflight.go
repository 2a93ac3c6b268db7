package runner

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/urlx"
)

// preflightWait bounds the pre-flight's wait for an answer (and for the
// TLS handshake); a shorter load timeout bounds it too.
const preflightWait = 5 * time.Second

// preflight sends one real request to each distinct scheme, host and port
// of the endpoints before the load, so that a target that cannot be
// reached, speaks the other scheme, or accepts connections but never
// answers is one clear error, not a report full of failures. It uses the
// first endpoint of each address with the run's headers. A GET, HEAD or
// OPTIONS is sent as it is; any other method is sent as a HEAD of the same
// URL, so the pre-flight changes nothing on the server. Any status is
// fine: the run judges statuses. The request is not part of the soak.
func preflight(ctx context.Context, lo load.Options) error {
	wait := min(cmp.Or(lo.Timeout, load.DefaultTimeout), preflightWait)
	seen := map[urlx.Addr]bool{}
	for _, ep := range lo.Endpoints {
		a, err := urlx.ParseAddr(ep.URL)
		if err != nil {
			return errors.New(urlx.Scrub(fmt.Sprintf("URL %v", err), ep.URL))
		}
		if seen[a] {
			continue
		}
		seen[a] = true
		if err := preflightOne(ctx, a, ep, lo, wait); err != nil {
			return err
		}
	}
	return nil
}

// preflightOne makes the pre-flight request of one address.
func preflightOne(ctx context.Context, a urlx.Addr, ep load.Endpoint, lo load.Options, wait time.Duration) error {
	u := urlx.Redact(ep.URL)
	d := net.Dialer{Timeout: preflightWait}
	c, err := d.DialContext(ctx, "tcp", a.String())
	if err != nil {
		var dns *net.DNSError
		if errors.As(err, &dns) {
			// The name did not resolve: no server was asked, so asking
			// whether it listens points the wrong way.
			return fmt.Errorf("cannot resolve the host of %s: %w (check the URL's host name)", u, unwrapOp(err))
		}
		return fmt.Errorf("cannot reach %s: %w (is the server running and listening on %s?)", u, unwrapOp(err), a)
	}
	defer c.Close()
	defer context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })()
	_ = c.SetDeadline(time.Now().Add(wait))
	conn := c
	if a.TLS {
		tc := tls.Client(c, &tls.Config{ServerName: a.Host, InsecureSkipVerify: lo.InsecureTLS}) //nolint:gosec // user's explicit choice
		if err := tc.HandshakeContext(ctx); err != nil {
			return cmp.Or(ctx.Err(), handshakeError(u, err, wait))
		}
		conn = tc
	}
	req, err := preflightRequest(ctx, ep, lo)
	if err != nil {
		return errors.New(urlx.Scrub(fmt.Sprintf("URL %v", err), ep.URL))
	}
	if err := req.Write(conn); err != nil {
		return ctx.Err() // a write that fails is the run's to count
	}
	return cmp.Or(ctx.Err(), checkAnswer(bufio.NewReader(conn), u, a, wait))
}

// preflightRequest is the request preflight sends for ep.
func preflightRequest(ctx context.Context, ep load.Endpoint, lo load.Options) (*http.Request, error) {
	method := cmp.Or(ep.Method, http.MethodGet)
	var body io.Reader
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		if len(ep.Body) > 0 {
			body = bytes.NewReader(ep.Body)
		}
	default:
		method = http.MethodHead
	}
	req, err := http.NewRequestWithContext(ctx, method, ep.URL, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "soakd")
	for _, h := range lo.Headers {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Set(h.Name, h.Value)
	}
	if body != nil && lo.ContentType != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", lo.ContentType)
	}
	req.Close = true
	return req, nil
}

// checkAnswer reads the start of the answer: none within wait is a hung
// target, a TLS record (or a 400 that says so) a TLS port.
func checkAnswer(br *bufio.Reader, u string, a urlx.Addr, wait time.Duration) error {
	head, err := br.Peek(5)
	switch {
	case len(head) == 0 && isTimeout(err):
		return fmt.Errorf("%s accepts connections but never answers (1 connection open, 0 bytes received in %v): is the server hung, stopped or overloaded?", u, wait)
	case a.TLS:
		return nil
	case len(head) >= 2 && (head[0] == 0x15 || head[0] == 0x16) && head[1] == 3:
		return speaksTLS(u)
	case bytes.HasPrefix(head, []byte("HTTP/")):
		resp, _ := io.ReadAll(io.LimitReader(br, 1024))
		if bytes.HasPrefix(resp[min(len(resp), 8):], []byte(" 400")) && bytes.Contains(bytes.ToLower(resp), []byte("https")) {
			return speaksTLS(u)
		}
	}
	return nil
}

func speaksTLS(u string) error {
	return fmt.Errorf("%s: the server speaks TLS, not plain HTTP: use %s", u, "https"+strings.TrimPrefix(u, "http"))
}

// handshakeError words a failed TLS handshake.
func handshakeError(u string, err error, wait time.Duration) error {
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &rh) && printable(rh.RecordHeader[:]): // "HTTP/", or an HTTP/0.9 error page
		return fmt.Errorf("%s: the server answers plain HTTP, not TLS: use %s", u, "http"+strings.TrimPrefix(u, "https"))
	case errors.As(err, &rh):
		return fmt.Errorf("%s: the server does not speak TLS (it answered %q): check the scheme and the port", u, rh.RecordHeader[:])
	case isTimeout(err):
		return fmt.Errorf("%s accepts connections but never answers the TLS handshake (1 connection open, no answer in %v): is the server hung, stopped or overloaded?", u, wait)
	}
	return fmt.Errorf("%s: TLS handshake failed: %w (for a self-signed certificate, skip verification with the load's insecure setting)", u, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func unwrapOp(err error) error {
	if op, ok := err.(*net.OpError); ok {
		if se, ok := op.Err.(*os.SyscallError); ok {
			return se.Err
		}
		return op.Err
	}
	return err
}

// printable tells whether b is text: what a plain HTTP server answers to
// a TLS hello, where a TLS server's bytes are binary.
func printable(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\r' && c != '\n' && c != '\t' {
			return false
		}
	}
	return true
}
