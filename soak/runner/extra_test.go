package runner

import (
	"strings"
	"testing"
)

// An extra resource's NAME is checked against the table of resources: it
// may not take one's name, and a counter series must keep the _total that
// makes its rate judged.
func TestExtraNamesReadTheResourceTable(t *testing.T) {
	for _, tc := range []struct{ metric, want string }{
		{"rss=go_memstats_heap_alloc_bytes", `resource name "rss" is taken`},
		{"threads=go_threads", `resource name "threads" is taken`},
		{"handled=http_requests_total", "name it handled_total"},
		{"handled_total=http_requests_total", ""},
		{"heap_bytes=go_memstats_heap_alloc_bytes", ""},
	} {
		s := DefaultSpec()
		s.Load.URL, s.Load.Requests = "http://127.0.0.1:8080/", 10
		s.Target.Remote.MetricsURL = "http://127.0.0.1:9090/metrics"
		s.Target.Remote.Metrics = []string{tc.metric}
		err := s.Check().Err()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want no error", tc.metric, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error containing %q", tc.metric, err, tc.want)
		}
	}
}
