// Package urlx is soakd's one rule for the URLs it takes (the load's
// URLs, the remote sources, the alert sinks, the external URL): how they
// are parsed and checked, and how their secrets are hidden wherever one
// is shown or logged (the API, the web pages, the logs, the reports and
// error messages).
//
// A URL is absolute, its scheme is one the setting allows (http or https
// for all of today's settings), it names a host, and its port, when it
// names one, is 1–65535. A host outside ASCII is taken in its IDNA
// (punycode) form.
package urlx

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Options say which URLs a setting takes.
type Options struct {
	// Schemes are the schemes allowed, in lower case; nil means http and
	// https.
	Schemes []string
}

// HTTP takes http:// and https:// URLs: the load, the remote sources, the
// alert sinks and the external URL.
var HTTP = Options{Schemes: []string{"http", "https"}}

// defaultPorts are the ports of the schemes soakd knows.
var defaultPorts = map[string]uint16{"http": 80, "https": 443}

// URL is a URL that passed Parse, with the address to dial.
type URL struct {
	*url.URL
	Addr Addr
}

// Addr is where a URL's server listens.
type Addr struct {
	Host string // the URL's hostname in ASCII, without brackets
	Port uint16 // the URL's port, or its scheme's
	TLS  bool   // https
}

// String is host:port, as net.Dial takes it.
func (a Addr) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port))) }

// Parse checks raw against o's rule and returns it with its address. The
// error quotes raw redacted, says what is wrong and what to write; the
// caller adds the setting's path (see package field).
func Parse(raw string, o Options) (*URL, error) {
	schemes := o.Schemes
	if schemes == nil {
		schemes = HTTP.Schemes
	}
	u, err := url.Parse(raw)
	if err != nil && !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("%q has no scheme: %s", Redact(raw), want(schemes))
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // ue quotes raw whole, secrets included
		}
		return nil, fmt.Errorf("%q is not a URL (%v): %s", Redact(raw), err, want(schemes))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%q has no scheme: %s", Redact(raw), want(schemes))
	}
	if !allowed(u.Scheme, schemes) {
		return nil, fmt.Errorf("%q: scheme %q is not taken here: %s", Redact(raw), u.Scheme, want(schemes))
	}
	a, err := address(u)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", Redact(raw), err)
	}
	return &URL{URL: u, Addr: a}, nil
}

// address checks u's host and port, and turns a host outside ASCII into
// its IDNA form in u.Host too.
func address(u *url.URL) (Addr, error) {
	a := Addr{Host: u.Hostname(), TLS: u.Scheme == "https"}
	if a.Host == "" {
		return a, errors.New("no host: write it as SCHEME://HOST[:PORT]/PATH")
	}
	if !ascii(a.Host) {
		h, err := idna.Lookup.ToASCII(a.Host)
		if err != nil || h == "" {
			return a, fmt.Errorf("host %q is not a valid host name (%v): write it in ASCII or punycode", a.Host, err)
		}
		a.Host = h
	}
	port := u.Port()
	if port == "" {
		p, ok := defaultPorts[u.Scheme]
		if !ok {
			return a, fmt.Errorf("no port: scheme %s has no default port, so give one (1-65535)", u.Scheme)
		}
		a.Port = p
		u.Host = a.hostOnly()
		return a, nil
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return a, fmt.Errorf("port %q is out of range: give 1-65535, or none for the scheme's default", port)
	}
	a.Port = uint16(p)
	u.Host = a.String()
	return a, nil
}

// ascii tells whether s is all ASCII: a host name to dial as it is.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hostOnly is the host as a URL writes it: IPv6 in brackets.
func (a Addr) hostOnly() string {
	if strings.Contains(a.Host, ":") {
		return "[" + a.Host + "]"
	}
	return a.Host
}

func allowed(scheme string, schemes []string) bool {
	for _, s := range schemes {
		if s == scheme {
			return true
		}
	}
	return false
}

// want says what a setting takes: "want an absolute http:// or https:// URL".
func want(schemes []string) string {
	s := make([]string, len(schemes))
	for i, sc := range schemes {
		s[i] = sc + "://"
	}
	return "want an absolute " + strings.Join(s, " or ") + " URL"
}

// ParseAddr is the address of an http:// or https:// URL: Parse with
// HTTP, for the code that dials it.
func ParseAddr(raw string) (Addr, error) {
	u, err := Parse(raw, HTTP)
	if err != nil {
		return Addr{}, err
	}
	return u.Addr, nil
}

// RequestURI is the path and query to write on a request line for raw
// ("/" when it names none), and false when raw is not a URL at all. It
// checks no scheme: it serves code that already holds a checked URL.
func RequestURI(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "/", false
	}
	if uri := u.RequestURI(); uri != "" {
		return uri, true
	}
	return "/", true
}

// WithQuery is raw with the query key set to value.
func WithQuery(raw, key, value string) (string, error) {
	u, err := Parse(raw, HTTP)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
