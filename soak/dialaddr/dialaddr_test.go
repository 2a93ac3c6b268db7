package dialaddr

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw, want, err string
		tls            bool
	}{
		{raw: "http://127.0.0.1/", want: "127.0.0.1:80"},
		{raw: "https://localhost/x", want: "localhost:443", tls: true},
		{raw: "HTTP://127.0.0.1:8080", want: "127.0.0.1:8080"},
		{raw: "http://[::1]:9000/", want: "[::1]:9000"},
		{raw: "ftp://127.0.0.1/", err: "scheme must be http or https"},
		{raw: "localhost:80", err: "scheme must be http or https"},
		{raw: "http:///x", err: "no host"},
		{raw: "http://127.0.0.1:0/", err: `port "0": want 1-65535`},
		{raw: "http://127.0.0.1:70000/", err: `port "70000": want 1-65535`},
		{raw: "http://a b/", err: "invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a, err := Parse(tc.raw)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %v, %v; want an error containing %q", a, err, tc.err)
				}
			case err != nil || a.String() != tc.want || a.TLS != tc.tls:
				t.Errorf("got %v (tls %v), %v; want %s (tls %v)", a, a.TLS, err, tc.want, tc.tls)
			}
		})
	}
}
