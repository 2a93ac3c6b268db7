package runner

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/load"
)

// silentListener accepts connections on 127.0.0.1:0, reads what comes and
// never writes a byte.
func silentListener(t *testing.T) string {
	t.Helper()
	return soaktest.RawServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

func TestPreflight(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	plain := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	plain.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS hellos on the plain port
	plain.Start()
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // plain requests on the TLS port
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	hung := silentListener(t)
	page := answerOnce(t, "<!DOCTYPE HTML>\n<html><body>Bad request version</body></html>\n")
	refused := closedURL(t)
	https := func(u string) string { return strings.Replace(u, "http:", "https:", 1) }
	http := func(u string) string { return strings.Replace(u, "https:", "http:", 1) }

	tests := []struct {
		name    string
		eps     []load.Endpoint
		wantErr string // "" = no error
	}{
		{"404 is fine", []load.Endpoint{{URL: plain.URL + "/nope"}}, ""},
		{"POST is sent as HEAD", []load.Endpoint{{Method: "POST", URL: plain.URL + "/", Body: []byte("x")}}, ""},
		{"https to a plain port", []load.Endpoint{{URL: https(plain.URL) + "/"}}, "answers plain HTTP, not TLS: use " + plain.URL + "/"},
		{"https to an HTTP/0.9 error page", []load.Endpoint{{URL: https(page)}}, "answers plain HTTP, not TLS: use " + page},
		{"http to a TLS port", []load.Endpoint{{URL: http(tlsSrv.URL) + "/"}}, "speaks TLS, not plain HTTP: use " + tlsSrv.URL + "/"},
		{"hung", []load.Endpoint{{URL: hung}}, "accepts connections but never answers (1 connection open, 0 bytes received in 300ms)"},
		{"hung TLS", []load.Endpoint{{URL: https(hung)}}, "never answers the TLS handshake"},
		{"second address hung", []load.Endpoint{{URL: plain.URL + "/"}, {URL: hung}}, hung + " accepts connections but never answers"},
		{"refused", []load.Endpoint{{URL: refused}}, "cannot reach " + refused},
		// A name that does not resolve (.invalid never does, RFC 2606)
		// is not a server that is not listening.
		{"unresolvable host", []load.Endpoint{{URL: "http://soakd-preflight.invalid:8080/"}}, "cannot resolve the host of http://soakd-preflight.invalid:8080/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo := load.Options{Endpoints: tt.eps, Timeout: 300 * time.Millisecond, InsecureTLS: true}
			err := preflight(context.Background(), lo)
			t.Logf("preflight: %v", err)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("preflight: %v; want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("preflight: %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(methods, " "); strings.Contains(got, "POST") || !strings.Contains(got, "HEAD") {
		t.Errorf("the server saw %v; want no POST from the pre-flight", methods)
	}
}

// closedURL is a loopback URL nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String() + "/"
	ln.Close()
	return u
}

// answerOnce answers every connection on 127.0.0.1:0 with text, whatever
// it is sent, and closes it.
func answerOnce(t *testing.T, text string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 4096))
			_, _ = io.WriteString(c, text)
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String() + "/"
}
