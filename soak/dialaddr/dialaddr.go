// Package dialaddr turns a load URL into the address to dial, by one rule
// that the load engine, the preflight check, the probes' port lookup and
// --exec's readiness wait all share: http and https only, the scheme's
// port when the URL names none, a host, and a port of 1–65535.
package dialaddr

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Addr is where a URL's server listens.
type Addr struct {
	Host string // the URL's hostname, without brackets
	Port uint16
	TLS  bool // https
}

// String is host:port, as net.Dial takes it.
func (a Addr) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port))) }

// Parse returns the address of raw, or an error that names the URL and
// what is wrong with it.
func Parse(raw string) (Addr, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Addr{}, fmt.Errorf("%q: %w", raw, err)
	}
	var a Addr
	port := u.Port()
	switch strings.ToLower(u.Scheme) {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		a.TLS = true
		if port == "" {
			port = "443"
		}
	default:
		return Addr{}, fmt.Errorf("%q: scheme must be http or https", raw)
	}
	if a.Host = u.Hostname(); a.Host == "" {
		return Addr{}, fmt.Errorf("%q: no host", raw)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return Addr{}, fmt.Errorf("%q: port %q: want 1-65535", raw, port)
	}
	a.Port = uint16(p)
	return a, nil
}
