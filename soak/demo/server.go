// Package demo is soakd's built-in demo target: an HTTP server whose
// misbehaviour is set by options. It can leak a fixed number of bytes per
// request (outside the Go heap, so the truth is exact), leak an fd every N
// requests, burn CPU or sleep per request, or fill a cache that then stays
// flat. `soakd demo` runs it, and the tests spawn it as a target.
package demo

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Options set what each request to "/" does.
type Options struct {
	LeakBytes int // bytes leaked per request
	// LeakAfter delays LeakBytes: requests leak only once the server has
	// served this long, as a leak that starts in the night does.
	LeakAfter       time.Duration
	LeakFDEvery     int           // leak one fd every N requests; 0 = never
	CPUPerRequest   time.Duration // busy CPU per request
	Sleep           time.Duration // sleep per request
	CacheEntries    int           // the first N requests each add a cache entry
	CacheEntryBytes int           // bytes per cache entry
	BodyBytes       int           // response body size (default 128)
	// StallAt and StallFor stall the server once: request StallAt to "/"
	// and every request that arrives in the StallFor after it wait until
	// it is over, as a server does through a long GC pause or a lock
	// held too long. An open loop meets it by starting more workers.
	StallAt  uint64
	StallFor time.Duration
	// HeapLeakBytes leaks this many bytes per request in the Go heap, all
	// from one function (heapLeak.retainHeap), for heap profiles to find.
	HeapLeakBytes int
	// Pprof serves net/http/pprof under /debug/pprof/.
	Pprof bool
	// Fork starts n child processes when /ctl/fork is called; nil disables it.
	Fork func(n int) error
	// Exit is called by /ctl/exit; nil disables it.
	Exit func(code int)
}

// Server is the demo target's handler.
type Server struct {
	opts     Options
	started  time.Time
	body     []byte
	requests atomic.Uint64
	leak     Arena // per-request leaks
	heap     heapLeak
	ctl      Arena // /ctl/alloc
	// cache holds the cache entries, outside the Go heap like a C server's
	// cache: it fills, then stays exactly flat.
	cache Arena
	mu    sync.Mutex
	fds   []*os.File // leaked or held fds; guarded by mu
	// stallEnd is when the stall (Options.StallAt) ends, in Unix
	// nanoseconds; 0 before it.
	stallEnd atomic.Int64
	mux      *http.ServeMux
}

// NewServer returns a demo target with the given behaviour.
func NewServer(opts Options) *Server {
	if opts.BodyBytes <= 0 {
		opts.BodyBytes = 128
	}
	s := &Server{opts: opts, started: time.Now(), body: make([]byte, opts.BodyBytes)}
	for i := range s.body {
		s.body[i] = 'a' + byte(i%26)
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/", s.work)
	s.mux.HandleFunc("/static", s.static)
	s.mux.HandleFunc("POST /ctl/alloc", s.ctlAlloc)
	s.mux.HandleFunc("POST /ctl/fds", s.ctlFDs)
	s.mux.HandleFunc("POST /ctl/fork", s.ctlFork)
	s.mux.HandleFunc("POST /ctl/exit", s.ctlExit)
	s.mux.HandleFunc("GET /ctl/stats", s.ctlStats)
	if opts.Pprof {
		mountPprof(s.mux)
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write(s.body)
}

func (s *Server) work(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	o := &s.opts
	if o.StallAt > 0 {
		s.stall(n)
	}
	if o.LeakBytes > 0 && time.Since(s.started) >= o.LeakAfter {
		if err := s.leak.Take(o.LeakBytes); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if o.HeapLeakBytes > 0 {
		s.heap.retainHeap(o.HeapLeakBytes)
	}
	if o.LeakFDEvery > 0 && n%uint64(o.LeakFDEvery) == 0 {
		if err := s.hold(1); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if o.CacheEntries > 0 && n <= uint64(o.CacheEntries) {
		if err := s.cache.Take(o.CacheEntryBytes); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if o.CPUPerRequest > 0 {
		burn(o.CPUPerRequest)
	}
	if o.Sleep > 0 {
		time.Sleep(o.Sleep)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write(s.body)
}

// stall holds request n until the stall is over, if it is the stall's
// first request or arrives during it.
func (s *Server) stall(n uint64) {
	if n == s.opts.StallAt {
		s.stallEnd.Store(time.Now().Add(s.opts.StallFor).UnixNano())
	}
	if end := s.stallEnd.Load(); end > 0 {
		time.Sleep(time.Until(time.Unix(0, end)))
	}
}

// burn spins until its thread has used d of CPU time, so that a busy
// machine stretches the wall time of a request but not its CPU demand.
func burn(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, deadline := threadCPU(), time.Now().Add(10*d)
	x := uint64(1)
	for threadCPU()-start < d && time.Now().Before(deadline) {
		for i := 0; i < 1000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Store(x)
}

// threadCPU is the calling thread's user+system CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is RUSAGE_THREAD, which package syscall does not name.
const rusageThread = 1

var sink atomic.Uint64

func (s *Server) hold(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return fmt.Errorf("demo: open %s: %w", os.DevNull, err)
		}
		s.fds = append(s.fds, f)
	}
	return nil
}

func intParam(r *http.Request, name string) (int, error) {
	v, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("query parameter %q must be a whole number >= 0, got %q", name, r.URL.Query().Get(name))
	}
	return v, nil
}

func (s *Server) ctlAlloc(w http.ResponseWriter, r *http.Request) {
	mib, err := intParam(r, "mib")
	if err == nil {
		err = s.ctl.Take(mib << 20)
	}
	reply(w, err)
}

func (s *Server) ctlFDs(w http.ResponseWriter, r *http.Request) {
	n, err := intParam(r, "n")
	if err == nil {
		err = s.hold(n)
	}
	reply(w, err)
}

func (s *Server) ctlFork(w http.ResponseWriter, r *http.Request) {
	n, err := intParam(r, "n")
	if err == nil && s.opts.Fork == nil {
		err = fmt.Errorf("fork is not enabled")
	}
	if err == nil {
		err = s.opts.Fork(n)
	}
	reply(w, err)
}

func (s *Server) ctlExit(w http.ResponseWriter, r *http.Request) {
	code, err := intParam(r, "code")
	if err == nil && s.opts.Exit == nil {
		err = fmt.Errorf("exit is not enabled")
	}
	reply(w, err)
	if err == nil {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		go func() {
			time.Sleep(50 * time.Millisecond)
			s.opts.Exit(code)
		}()
	}
}

func (s *Server) ctlStats(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	fds := len(s.fds)
	s.mu.Unlock()
	fmt.Fprintf(w, "requests %d\nleaked_bytes %d\nheld_fds %d\ncache_bytes %d\nallocated_bytes %d\n",
		s.requests.Load(), s.leak.Leaked(), fds, s.cache.Leaked(), s.ctl.Leaked())
}

func reply(w http.ResponseWriter, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Write([]byte("ok\n"))
}
