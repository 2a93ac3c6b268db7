package alerts

import "testing"

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://127.0.0.1:9093", "http://127.0.0.1:9093"},
		{"https://user:pass@am.example:9093/api", "https://REDACTED@am.example:9093/api"},
		{"https://example.invalid/hook?token=abc&team=web", "https://example.invalid/hook?team=REDACTED&token=REDACTED"},
		{"https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/T0000/B0000/REDACTED"},
		{"https://example.invalid/hook#frag", "https://example.invalid/hook#REDACTED"},
		{"::not a url", "REDACTED"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := RedactURL(c.in); got != c.want {
				t.Errorf("got %q; want %q", got, c.want)
			}
		})
	}
}
