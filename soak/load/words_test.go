package load

import (
	"bytes"
	"strings"
	"testing"
)

// TestModeWords: one client is "1 client", as many are "N clients".
func TestModeWords(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{1, "closed loop, 1 client, "}, {4, "closed loop, 4 clients, "}} {
		var buf bytes.Buffer
		s := &Summary{Mode: "closed", Concurrency: tt.n, KeepAlive: true}
		s.writeTotals(&buf)
		if !strings.Contains(buf.String(), tt.want) {
			t.Errorf("%d clients: %q; want it to contain %q", tt.n, firstLine(buf.String()), tt.want)
		}
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
