package load

import (
	"fmt"
	"strings"

	"github.com/soakd/soakd/soak/urlx"
)

// target is where requests for one endpoint go: one connection per worker
// per distinct target.
type target struct {
	addr       string // host:port to dial
	hostHeader string // Host header value
	serverName string // TLS SNI
	tls        bool
}

// endpoint is an Endpoint with its request bytes built once.
type endpoint struct {
	target int    // index into Engine.targets
	index  int    // index into Engine.eps and Options.Endpoints
	req    []byte // the whole request: head and body
	head   bool   // HEAD responses have no body
	cumW   int    // cumulative weight, for picking
}

// parseTarget checks an http:// or https:// URL and returns where to dial
// (see urlx.Parse for the rule).
func parseTarget(raw string) (target, error) {
	u, err := urlx.Parse(raw, urlx.HTTP)
	if err != nil {
		return target{}, err
	}
	a := u.Addr
	return target{tls: a.TLS, addr: a.String(), hostHeader: u.Host, serverName: a.Host}, nil
}

// requestURI is the path and query to put on the request line.
func requestURI(raw string) string {
	uri, _ := urlx.RequestURI(raw)
	return uri
}

// buildRequest renders one endpoint's request once, so that sending it is a
// single Write of ready bytes.
func buildRequest(ep Endpoint, t target, o *Options) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", ep.Method, requestURI(ep.URL))
	has := func(name string) bool {
		for _, h := range o.Headers {
			if strings.EqualFold(h.Name, name) {
				return true
			}
		}
		return false
	}
	if !has("Host") {
		fmt.Fprintf(&b, "Host: %s\r\n", t.hostHeader)
	}
	if !has("User-Agent") {
		b.WriteString("User-Agent: soakd\r\n")
	}
	for _, h := range o.Headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	if o.ContentType != "" && !has("Content-Type") {
		fmt.Fprintf(&b, "Content-Type: %s\r\n", o.ContentType)
	}
	if len(ep.Body) > 0 || methodWantsBody(ep.Method) {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(ep.Body))
	}
	if !o.KeepAlive {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	b.Write(ep.Body)
	return []byte(b.String())
}

func methodWantsBody(m string) bool {
	return m == "POST" || m == "PUT" || m == "PATCH"
}

// checkHeader rejects header lines that would break the request framing.
func checkHeader(h Header) error {
	if h.Name == "" || strings.ContainsAny(h.Name, " \t\r\n:") {
		return fmt.Errorf("header name %q: must be a non-empty token without spaces or colons", h.Name)
	}
	if strings.ContainsAny(h.Value, "\r\n") {
		return fmt.Errorf("header %s: value must not contain line breaks", h.Name)
	}
	return nil
}
