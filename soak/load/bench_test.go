package load

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// static512 is a keep-alive response with a 512-byte body, as nginx would
// send for a small static file.
var static512 = []byte("HTTP/1.1 200 OK\r\nServer: bench\r\nContent-Type: text/html\r\nContent-Length: 512\r\n\r\n" + strings.Repeat("x", 512))

// BenchmarkRoundTrip is one request round trip of the engine at c=1 with
// keep-alive against a minimal local server.
func BenchmarkRoundTrip(b *testing.B) {
	benchEngine(b, Options{KeepAlive: true})
}

// benchEngine runs b.N requests of the engine with o (its endpoints,
// request count and a generous duration filled in) against a minimal
// local server that answers static512.
func benchEngine(b *testing.B, o Options) {
	url := rawServer(b, serveStatic(static512))
	o.Endpoints, o.Requests, o.Duration = endpoints(url), uint64(b.N), time.Hour
	e, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s, err := e.Run(context.Background())
	if err != nil || s.Errors != 0 {
		b.Fatalf("got %v, errors %v", err, s.ErrorsByCause)
	}
}

// BenchmarkFasthttpRoundTrip is the same round trip with fasthttp's
// HostClient, for comparison.
func BenchmarkFasthttpRoundTrip(b *testing.B) {
	url := rawServer(b, serveStatic(static512))
	c := &fasthttp.HostClient{Addr: strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"), MaxConns: 1}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(url)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.DoTimeout(req, resp, 30*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNetHTTPRoundTrip is the same round trip with net/http's default
// transport, for comparison.
func BenchmarkNetHTTPRoundTrip(b *testing.B) {
	url := rawServer(b, serveStatic(static512))
	c := &http.Client{Timeout: 30 * time.Second}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkHistogramRecord is one latency record into an HDR histogram.
func BenchmarkHistogramRecord(b *testing.B) {
	h := newHist()
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v*7 + 13) % histMax
		_ = h.RecordValue(v + 1)
	}
}

// BenchmarkHeapAfterRequests reports the live heap after runs of two
// sizes, with the engine still reachable: it must not grow with the count.
func BenchmarkHeapAfterRequests(b *testing.B) {
	for _, n := range []uint64{10_000, 200_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			url := rawServer(b, serveStatic(static512))
			var heap uint64
			for b.Loop() {
				heap = heapAfter(b, url, n)
			}
			b.ReportMetric(float64(heap), "heap-bytes")
		})
	}
}

func heapAfter(b *testing.B, url string, n uint64) uint64 {
	e, err := New(Options{Endpoints: endpoints(url), Requests: n, Concurrency: 4, KeepAlive: true,
		Interval: 10 * time.Millisecond, OnInterval: func(Interval) {}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(e)
	return ms.HeapAlloc
}

// nginx512 is nginx's response to a GET of a 512-byte static file.
var nginx512 = []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.26.3\r\nDate: Tue, 01 Dec 2026 00:10:00 GMT\r\n" +
	"Content-Type: text/html\r\nContent-Length: 512\r\nLast-Modified: Tue, 01 Dec 2026 00:00:00 GMT\r\n" +
	"Connection: keep-alive\r\nETag: \"692cdb80-200\"\r\nAccept-Ranges: bytes\r\n\r\n" + strings.Repeat("x", 512))

// BenchmarkStreamParser parses one nginx response in one feed, as the
// event loop does for each response.
func BenchmarkStreamParser(b *testing.B) {
	var p streamParser
	for b.Loop() {
		p.reset(false)
		if done, _, err := p.feed(nginx512, nil); !done || err != nil {
			b.Fatalf("got done %v err %v; want a whole response", done, err)
		}
	}
}

// BenchmarkRoundTrip404 is BenchmarkRoundTrip against a server that
// answers 404 to everything: every request fails and keeps its status
// line as its error text, without an allocation.
func BenchmarkRoundTrip404(b *testing.B) {
	url := rawServer(b, serveStatic(notFound))
	e, err := New(Options{Endpoints: endpoints(url), Requests: uint64(b.N), KeepAlive: true, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s, err := e.Run(context.Background())
	if err != nil || s.ErrorsByCause[CauseStatus] != uint64(b.N) {
		b.Fatalf("got %v, errors %v", err, s.ErrorsByCause)
	}
}

var notFound = []byte("HTTP/1.1 404 Not Found\r\nServer: bench\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\nnot found")
