package demo

import (
	"net/http"
	"net/http/pprof"
	"runtime"
	"sync"
)

// heapLeak holds the Go-heap leak: a slice per request, never dropped.
type heapLeak struct {
	mu   sync.Mutex // guards kept
	kept [][]byte
}

// retainHeap is the Go-heap leak's one allocation site, by name: a heap
// profile's diff must find it.
//
//go:noinline
func (h *heapLeak) retainHeap(n int) {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	h.mu.Lock()
	h.kept = append(h.kept, b)
	h.mu.Unlock()
}

// pprofRate is the heap profile's sampling rate with --pprof: one
// allocation per 64 KiB on average (the runtime's default is 512 KiB), so
// that a short test's heap diff carries about 5 % of sampling error.
const pprofRate = 64 << 10

// mountPprof serves net/http/pprof's handlers under /debug/pprof/, and
// samples the heap profile at pprofRate.
func mountPprof(mux *http.ServeMux) {
	runtime.MemProfileRate = pprofRate
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
