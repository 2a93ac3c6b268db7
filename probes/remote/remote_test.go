package remote

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/soakd/soakd/soak/field"
	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/probes"
)

// instrumented is a handler exposing a real client_golang registry with
// the process and Go collectors, plus the collectors given.
func instrumented(t *testing.T, extra ...prometheus.Collector) http.Handler {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	reg.MustRegister(extra...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScrapeFormats(t *testing.T) {
	heap := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jvm_memory_used_bytes"}, []string{"area"})
	heap.WithLabelValues("heap").Set(4096)
	heap.WithLabelValues("nonheap").Set(1)
	h := instrumented(t, heap)
	for _, accept := range []string{"text/plain;version=0.0.4", "application/openmetrics-text;version=1.0.0", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"} {
		t.Run(accept, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Set("Accept", accept) // the format under test, whatever soakd asks
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			src, err := Open(context.Background(), Config{MetricsURL: srv.URL + "/metrics", Metrics: []string{`heap_bytes=jvm_memory_used_bytes{area="heap"}`}}, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			s := src.Sample()
			switch {
			case !s.Alive || !s.RSSValid || s.RSS == 0:
				t.Errorf("Alive %v, RSSValid %v, RSS %d; want a live sample with RSS", s.Alive, s.RSSValid, s.RSS)
			case !s.FDsValid || s.FDs == 0 || s.FDLimit == 0:
				t.Errorf("FDsValid %v, FDs %d, FDLimit %d; want open fds and their limit", s.FDsValid, s.FDs, s.FDLimit)
			case !s.ThreadsValid || s.Threads == 0:
				t.Errorf("Threads %d (ThreadsValid %v); want go_threads", s.Threads, s.ThreadsValid)
			case !s.CPUSplitUnknown || s.NoCPU:
				t.Errorf("CPUSplitUnknown %v, NoCPU %v; want process_cpu_seconds_total as an unsplit total", s.CPUSplitUnknown, s.NoCPU)
			case s.Extra["heap_bytes"] != 4096:
				t.Errorf("Extra = %v; want heap_bytes 4096", s.Extra)
			case s.Incarnation != 1 || s.SelfRSS == 0:
				t.Errorf("Incarnation %d, SelfRSS %d; want 1 and soakd's own RSS", s.Incarnation, s.SelfRSS)
			}
			ab := src.Absent()
			for _, k := range []string{"pss", "uss", "anon", "close_wait"} {
				if ab[k] == "" {
					t.Errorf("Absent()[%q] is empty; want a reason", k)
				}
			}
			if _, ok := ab["rss"]; ok {
				t.Errorf("rss is absent (%q); want present", ab["rss"])
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	two := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "process_resident_memory_bytes"}, []string{"pid"})
	two.WithLabelValues("1").Set(1)
	two.WithLabelValues("2").Set(2)
	reg2 := prometheus.NewRegistry()
	reg2.MustRegister(two)
	many := httptest.NewServer(promhttp.HandlerFor(reg2, promhttp.HandlerOpts{}))
	defer many.Close()
	none := httptest.NewServer(promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{}))
	defer none.Close()
	ok := httptest.NewServer(instrumented(t))
	defer ok.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	tests := []struct {
		name  string
		cfg   Config
		field string
		want  string
	}{
		{"down", Config{MetricsURL: down}, "metrics_url", "cannot scrape"},
		{"many", Config{MetricsURL: many.URL}, "metrics_url", "holds 2 series of process_resident_memory_bytes"},
		{"nothing", Config{MetricsURL: none.URL}, "metrics_url", "holds none of process_resident_memory_bytes"},
		{"missing extra", Config{MetricsURL: ok.URL, Metrics: []string{"heap_bytes=jvm_heap"}}, "metrics", "has no such series"},
		{"bad extra", Config{MetricsURL: ok.URL, Metrics: []string{"heap bytes=x"}}, "metrics[0]", "want NAME=SERIES"},
		{"taken name", Config{MetricsURL: ok.URL, Metrics: []string{"working_set_bytes=go_threads"}}, "metrics[0]", "is taken"},
		{"bad matcher", Config{MetricsURL: ok.URL, Metrics: []string{`h=go_threads{a=~"x"}`}}, "metrics[0]", "only = matchers"},
		{"both", Config{MetricsURL: ok.URL, PrometheusURL: ok.URL}, "metrics_url", "not both"},
		{"no selector", Config{PrometheusURL: ok.URL}, "selector", "needs a selector"},
		{"bad selector", Config{PrometheusURL: ok.URL, Selector: "pod=x"}, "selector", "want {label"},
		{"not a URL", Config{MetricsURL: "localhost:9090"}, "metrics_url", "has no scheme: want an absolute http:// or https:// URL"},
		{"password in URL and file", Config{MetricsURL: "http://u:hunter2@127.0.0.1/", BasicAuthFile: "/x"}, "metrics_url", "give them in one place"},
		{"no such token file", Config{MetricsURL: ok.URL, BearerTokenFile: "/nonexistent/token"}, "bearer_token_file", "no such file"},
		{"credentials alone", Config{CAFile: "/x"}, "metrics_url", "need a remote source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(context.Background(), tc.cfg, zaptest.NewLogger(t))
			fe := field.As(err)
			if len(fe) != 1 || fe[0].Path != "target.remote."+tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v; want a %s error containing %q", err, tc.field, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	h := instrumented(t)
	const token, user, pass = "s3cret-token", "soak", "pa55word"
	auth := func(w http.ResponseWriter, r *http.Request) {
		u, p, basic := r.BasicAuth()
		if r.Header.Get("Authorization") != "Bearer "+token && !(basic && u == user && p == pass) {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(auth))
	defer srv.Close()
	ca := writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	tokenFile := writeFile(t, "token", token+"\n")
	basicFile := writeFile(t, "basic", user+":"+pass+"\n")
	wrongFile := writeFile(t, "wrong", "nope\n")
	tests := []struct {
		name string
		cfg  Config
		want string // "" = opens
	}{
		{"bearer+ca", Config{BearerTokenFile: tokenFile, CAFile: ca}, ""},
		{"basic+insecure", Config{BasicAuthFile: basicFile, InsecureSkipVerify: true}, ""},
		{"no ca", Config{BearerTokenFile: tokenFile}, "certificate"},
		{"wrong token", Config{BearerTokenFile: wrongFile, CAFile: ca}, "check the bearer token"},
		{"bad basic file", Config{BasicAuthFile: wrongFile, CAFile: ca}, "want one line user:password"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.MetricsURL = srv.URL + "/metrics"
			src, err := Open(context.Background(), tc.cfg, zaptest.NewLogger(t))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s := src.Sample(); !s.Alive {
					t.Errorf("sample not alive; notes %v", src.Notes())
				}
				for _, secret := range []string{token, pass} {
					if strings.Contains(src.Describe(), secret) {
						t.Errorf("Describe() shows a credential: %s", src.Describe())
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v; want an error containing %q", err, tc.want)
			}
			for _, secret := range []string{token, pass} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a credential: %v", err)
				}
			}
		})
	}
	_ = x509.ParseCertificate // the CA file above is srv's own certificate
}

// TestBuilder follows synthetic readings through a restart, a counter
// reset, a series that disappears and a target that is not seen.
func TestBuilder(t *testing.T) {
	var n notes
	b := newBuilder(families[0], &n)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	steps := []struct {
		r           reading
		alive       bool
		incarnation int
		cpu         float64
		fds         bool
	}{
		{reading{kRSS: 100, kStart: 1000, kCPUTotal: 5, kFDs: 3}, true, 1, 5, true},
		{reading{kRSS: 110, kStart: 1000, kCPUTotal: 7, kFDs: 3}, true, 1, 7, true},
		{reading{kRSS: 120, kStart: 1000, kCPUTotal: 1}, true, 1, 8, false},    // reset; fds gone
		{reading{}, false, 1, 0, false},                                        // not seen
		{reading{kRSS: 50, kStart: 2000, kCPUTotal: 0.5}, true, 2, 0.5, false}, // restart
	}
	for i, st := range steps {
		s := b.sample(at(i), st.r)
		if s.Alive != st.alive || s.Incarnation != st.incarnation || s.CPUUser != st.cpu || s.FDsValid != st.fds {
			t.Errorf("step %d: Alive %v, Incarnation %d, CPUUser %g, FDsValid %v; want %v, %d, %g, %v",
				i, s.Alive, s.Incarnation, s.CPUUser, s.FDsValid, st.alive, st.incarnation, st.cpu, st.fds)
		}
	}
	got := strings.Join(n.all(), "\n")
	for _, want := range []string{"counter reset at 00:00:02", "fds disappeared at 00:00:02", "restart at 00:00:04", "series disappeared at 00:00:03"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
}

func TestParseSelector(t *testing.T) {
	got, err := parseSelector(`{pod="api-7d9c", container = "api",ns="a\"b"}`)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != `map[container:api ns:a"b pod:api-7d9c]` {
		t.Errorf("parseSelector = %v", got)
	}
	if x, err := ParseExtra(`heap_bytes=jvm_memory_used_bytes{area="heap"}`); err != nil || x.Metric != "jvm_memory_used_bytes" || x.Labels["area"] != "heap" {
		t.Errorf("ParseExtra = %+v, %v", x, err)
	}
}

// TestScrapeEndpointGoesDown samples an endpoint that stops answering:
// the sample is absent (not alive, no readings), and the note says why.
func TestScrapeEndpointGoesDown(t *testing.T) {
	srv := httptest.NewServer(instrumented(t))
	src, err := Open(context.Background(), Config{MetricsURL: srv.URL + "/metrics", Timeout: 2 * time.Second}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if s := src.Sample(); !s.Alive {
		t.Fatalf("first sample not alive; notes %v", src.Notes())
	}
	srv.Close()
	s := src.Sample()
	if s.Alive || s.RSS != 0 || s.FDsValid {
		t.Errorf("sample after the endpoint went down: Alive %v, RSS %d, FDsValid %v; want an absent sample", s.Alive, s.RSS, s.FDsValid)
	}
	if notes := strings.Join(src.Notes(), "\n"); !strings.Contains(notes, "scrape failed: cannot scrape") {
		t.Errorf("notes %q; want the failed scrape", notes)
	}
}

// TestFamilies reads a cAdvisor and a process-exporter exposition through
// decode, detect, read and the builder.
func TestFamilies(t *testing.T) {
	cadvisor := `# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="api",pod="api-7d9c"} 5e+07
container_memory_rss{container="api",pod="api-7d9c"} 4e+07
container_spec_memory_limit_bytes{container="api",pod="api-7d9c"} 2.68435456e+08
container_spec_cpu_quota{container="api",pod="api-7d9c"} 50000
container_spec_cpu_period{container="api",pod="api-7d9c"} 100000
container_file_descriptors{container="api",pod="api-7d9c"} 12
container_threads{container="api",pod="api-7d9c"} 9
container_cpu_user_seconds_total{container="api",pod="api-7d9c"} 3.5
container_cpu_system_seconds_total{container="api",pod="api-7d9c"} 1.5
container_start_time_seconds{container="api",pod="api-7d9c"} 1.7e+09
`
	procexp := `namedprocess_namegroup_memory_bytes{groupname="api",memtype="resident"} 3e+07
namedprocess_namegroup_memory_bytes{groupname="api",memtype="virtual"} 9e+08
namedprocess_namegroup_memory_bytes{groupname="api",memtype="swapped"} 0
namedprocess_namegroup_open_filedesc{groupname="api"} 20
namedprocess_namegroup_num_threads{groupname="api"} 7
namedprocess_namegroup_num_procs{groupname="api"} 3
namedprocess_namegroup_cpu_seconds_total{groupname="api",mode="user"} 2
namedprocess_namegroup_cpu_seconds_total{groupname="api",mode="system"} 1
namedprocess_namegroup_oldest_start_time_seconds{groupname="api"} 1.7e+09
`
	for _, tc := range []struct {
		name, text, family string
		check              func(s probes.Sample) string
	}{
		{"cadvisor", cadvisor, "cAdvisor", func(s probes.Sample) string {
			if s.RSS != 4e7 || s.Extra["working_set_bytes"] != 5e7 || s.MemMax != 268435456 || s.FDs != 12 || s.Threads != 9 ||
				s.CPUUser != 3.5 || s.CPUSystem != 1.5 || s.CPUSplitUnknown || s.CPUCapacity != 0.5 {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		}},
		{"process-exporter", procexp, "process-exporter", func(s probes.Sample) string {
			if s.RSS != 3e7 || s.VMS != 9e8 || s.FDs != 20 || s.Threads != 7 || s.Procs != 3 || s.CPUUser != 2 || s.CPUSystem != 1 {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := decode(strings.NewReader(tc.text), expfmt.NewFormat(expfmt.TypeTextPlain))
			if err != nil {
				t.Fatal(err)
			}
			f, err := detect(snap, "test")
			if err != nil || !strings.Contains(f.name, tc.family) {
				t.Fatalf("detect: %v, %v; want the %s family", f, err, tc.family)
			}
			r, amb := read(snap, f, nil)
			if len(amb) > 0 {
				t.Fatalf("ambiguous: %v", amb)
			}
			var n notes
			s := newBuilder(f, &n).sample(time.Now(), r)
			if bad := tc.check(s); bad != "" {
				t.Errorf("sample %s", bad)
			}
			if ab := absent(f, r); ab["pss"] == "" || ab["rss"] != "" {
				t.Errorf("absent = %v; want pss absent and rss present", ab)
			}
		})
	}
}
