package redact

import "testing"

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://user:PASSW0RD@127.0.0.1:8080/?apikey=SECRET123", "http://REDACTED@127.0.0.1:8080/?apikey=REDACTED"},
		{"http://127.0.0.1:8080/items?id=1&token=abc", "http://127.0.0.1:8080/items?id=REDACTED&token=REDACTED"},
		{"http://127.0.0.1:8080/plain", "http://127.0.0.1:8080/plain"},
		{"http://u@[::1]:80/", "http://REDACTED@[::1]:80/"},
		{"::not a url", Mark},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	if got := In("cannot reach http://u:p@h/?k=v: refused", "http://u:p@h/?k=v"); got != "cannot reach http://REDACTED@h/?k=REDACTED: refused" {
		t.Errorf("In: %q", got)
	}
}
