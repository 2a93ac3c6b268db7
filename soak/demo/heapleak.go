package demo

import (
	"net/http"
	"net/http/pprof"
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

// mountPprof serves net/http/pprof's handlers under /debug/pprof/.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
