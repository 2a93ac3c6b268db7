package alerts

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSlackBody(t *testing.T) {
	got := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	defer srv.Close()

	leak := LeakAlert(testLeak("web", "rss"))
	leak.GeneratorURL = "http://soakhost:7797/runs/42"
	down := TargetDownAlert("web", "", "the target exited with status 2")
	down.Status = StatusResolved
	if _, err := NewSlack("chat", srv.URL, HTTPOptions{}).Send(t.Context(), leak, down); err != nil {
		t.Fatalf("Send: %v", err)
	}
	var body map[string]string
	if err := json.Unmarshal(<-got, &body); err != nil {
		t.Fatal(err)
	}
	want := "[FIRING] SoakdLeak web/rss: RSS grows 4 KiB per request through the last third of the soak." +
		" +4 KiB/request, +12 MiB/h, exhaustion in 31h0m0s <http://soakhost:7797/runs/42|run 42>\n" +
		"[RESOLVED] SoakdTargetDown web/target: the target exited with status 2"
	if len(body) != 1 || body["text"] != want {
		t.Errorf("body: got %q\nwant {\"text\": %q}", body, want)
	}
}

// TestSlackEscapes: &, < and > in the text are escaped, as Slack asks, so
// that a reason's "p < 1e-9" or a "<!channel>" opens no link or mention.
func TestSlackEscapes(t *testing.T) {
	a := TargetDownAlert("a&b", "", "RSS +101 B/request, p < 1e-9 <!channel>")
	want := "[FIRING] SoakdTargetDown a&amp;b/target: RSS +101 B/request, p &lt; 1e-9 &lt;!channel&gt;"
	if got := SlackText([]Alert{a}); got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestFormatting(t *testing.T) {
	cases := []struct {
		name, got, want string
	}{
		{"bytes", formatAmount(4096, "bytes"), "4 KiB"},
		{"small bytes", formatAmount(12.5, "bytes"), "12.5 B"},
		{"negative MiB", formatAmount(-3<<20, "bytes"), "-3 MiB"},
		{"fds", formatAmount(0.0012, "fds"), "0.0012 fds"},
		{"many fds, no exponent", formatAmount(650346, "fds"), "650346 fds"},
		{"TiB, no exponent", formatAmount(1.2e12, "bytes"), "1.09 TiB"},
		{"thousands of GiB are TiB", formatAmount(1500*(1<<30), "bytes"), "1.46 TiB"},
		{"CPU per request", formatAmount(1e-9, "CPU seconds"), "1 ns CPU"},
		{"CPU per hour", formatAmount(3.6e-4, "CPU seconds"), "360 µs CPU"},
		{"no -0", formatAmount(-0.0000000000001, "fds"), "0 fds"},
		{"never", formatTTE(0), "never"},
		{"seconds", formatTTE(1500 * time.Millisecond), "2s"},
		{"hours", formatTTE(31*time.Hour + 20*time.Second), "31h0m0s"},
		{"run url", RunURL("http://h:7797/", "42"), "http://h:7797/runs/42"},
		{"no run url", RunURL("", "42"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %q; want %q", c.got, c.want)
			}
		})
	}
}
