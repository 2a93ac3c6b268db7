package urlx

import (
	"strings"
	"testing"
)

func TestParseAddr(t *testing.T) {
	tests := []struct {
		raw, want, err string
		tls            bool
	}{
		{raw: "http://127.0.0.1/", want: "127.0.0.1:80"},
		{raw: "https://localhost/x", want: "localhost:443", tls: true},
		{raw: "HTTP://127.0.0.1:8080", want: "127.0.0.1:8080"},
		{raw: "http://[::1]:9000/", want: "[::1]:9000"},
		{raw: "http://my_app:8080/", want: "my_app:8080"},
		{raw: "http://bücher.example/", want: "xn--bcher-kva.example:80"},
		{raw: "http://127.0.0.1:65535/", want: "127.0.0.1:65535"},
		{raw: "ftp://127.0.0.1/", err: `scheme "ftp" is not taken here: want an absolute http:// or https:// URL`},
		{raw: "localhost:80", err: "has no scheme: want an absolute http:// or https:// URL"},
		{raw: "127.0.0.1:80", err: "has no scheme"},
		{raw: "http://h:x/", err: "is not a URL"},
		{raw: "http:///x", err: "no host: write it as SCHEME://HOST[:PORT]/PATH"},
		{raw: "http://:8080/", err: "no host"},
		{raw: "http://127.0.0.1:0/", err: `port "0" is out of range: give 1-65535`},
		{raw: "http://127.0.0.1:65536/", err: `port "65536" is out of range`},
		{raw: "http://a b/", err: "invalid character"},
		{raw: "http://\u00ad/", err: "is not a valid host name"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a, err := ParseAddr(tc.raw)
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

// TestParseSchemes checks that Options pick the schemes, and that the
// message says which ones a setting takes.
func TestParseSchemes(t *testing.T) {
	ws := Options{Schemes: []string{"ws"}}
	if _, err := Parse("ws://h:1/", ws); err != nil {
		t.Errorf("ws://h:1/ with ws: %v; want no error", err)
	}
	_, err := Parse("ws://h/", ws)
	if err == nil || !strings.Contains(err.Error(), "give one (1-65535)") {
		t.Errorf("ws://h/ (no default port): %v; want it to ask for a port", err)
	}
	_, err = Parse("http://h/", ws)
	if err == nil || !strings.Contains(err.Error(), "want an absolute ws:// URL") {
		t.Errorf("http://h/ with ws: %v; want ws:// named", err)
	}
}

// TestParseHidesSecrets checks that no error quotes a URL's secrets.
func TestParseHidesSecrets(t *testing.T) {
	for _, raw := range []string{
		"ftp://u:PASSW0RD@h/?k=SECRET",
		"http://u:PASSW0RD@h:0/?k=SECRET",
		"http://u:PASSW0RD@a b/?k=SECRET",
		"u:PASSW0RD@h:80?k=SECRET",
	} {
		_, err := Parse(raw, HTTP)
		if err == nil {
			t.Errorf("%s: no error; want one", raw)
		} else if strings.Contains(err.Error(), "PASSW0RD") || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error %q shows a secret", raw, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:9093", "http://127.0.0.1:9093"},
		{"http://127.0.0.1:8080/plain", "http://127.0.0.1:8080/plain"},
		{"http://user:PASSW0RD@127.0.0.1:8080/?apikey=SECRET123", "http://REDACTED@127.0.0.1:8080/?apikey=REDACTED"},
		{"http://127.0.0.1:8080/items?id=1&token=abc", "http://127.0.0.1:8080/items?id=REDACTED&token=REDACTED"},
		{"http://u@[::1]:80/", "http://REDACTED@[::1]:80/"},
		{"https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/T0000/B0000/REDACTED"},
		{"https://example.invalid/hook#frag", "https://example.invalid/hook#REDACTED"},
		{"mailto:someone@example.invalid", "mailto:REDACTED@example.invalid"},
		{"user:PASSW0RD@h:80", "user:REDACTED@h:80"},
		{"localhost:9090", "localhost:9090"},
		{"::not a url?token=x", Mark},
		{"http://u:p@a b/", Mark},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"::x/abcdefghijklmnopqrstuvwxyz", "::x/REDACTED"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestScrub(t *testing.T) {
	raw := "http://u:p@h/?k=v"
	got := Scrub("cannot reach http://u:p@h/?k=v: refused; "+raw, raw, "", "http://other/?t=x")
	want := "cannot reach http://REDACTED@h/?k=REDACTED: refused; http://REDACTED@h/?k=REDACTED"
	if got != want {
		t.Errorf("Scrub = %q; want %q", got, want)
	}
	// net/http quotes the URL as it parsed it: HTTP://H becomes http://H.
	if got := Scrub(`Post "http://u:p@h/x?k=v": refused`, "HTTP://u:p@h/x?k=v"); strings.Contains(got, "u:p") || strings.Contains(got, "k=v") {
		t.Errorf("Scrub of the parsed form: %q shows a secret", got)
	}
}

// FuzzParse checks that Parse never panics, that what it takes has a
// port of 1-65535 and a host, and that its errors never quote a
// password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/", "https://u:pw@[::1]/?a=b", "ftp://x", "http://h:0", "http://bücher.example/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Parse(raw, HTTP)
		if err != nil {
			if strings.Contains(raw, ":SeCrEt@") && strings.Contains(err.Error(), "SeCrEt") {
				t.Errorf("%q: error %q shows the password", raw, err)
			}
			return
		}
		if u.Addr.Port == 0 || u.Addr.Host == "" {
			t.Errorf("%q: took %+v", raw, u.Addr)
		}
	})
}

func TestRedactKeepsNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"soakd.example.com", "soakd.example.com"},
		{"http://h/static/application-bundle.js", "http://h/static/application-bundle.js"},
		{"https://discord.com/api/webhooks/123456789012345678/abcDEF-ghi_jklMNOpqr", "https://discord.com/api/webhooks/REDACTED/REDACTED"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
