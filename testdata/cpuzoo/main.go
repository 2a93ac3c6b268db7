// Command cpuzoo is the CPU verdict's test target: servers of known shapes
// that the end-to-end tests soak and judge.
//
//	--shape loop     one event-loop thread (named "loop") does every
//	                 request's work in turn, while --helpers other threads
//	                 sit idle: the server is bound by that one thread.
//	--shape prefork  a master that re-executes itself into --workers
//	                 worker processes sharing its listener; each worker
//	                 serves on one thread.
//
// The work per request (--work):
//
//	burn   spin until the thread has used --cost of CPU time
//	write  pwrite(2) 64 KiB into a memfd until the thread has used --cost
//	       of CPU time: the time is spent in the kernel
//	scan   append an entry to a list and scan the whole list, so each
//	       request costs more CPU than the last (a CPU leak)
//
// It listens on 127.0.0.1 (--listen), writes HOST:PORT to --port-file, and
// exits after --max-lifetime whatever happens.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

type options struct {
	shape    string
	work     string
	cost     time.Duration
	helpers  int
	workers  int
	scanWork int
	conns    int
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("cpuzoo", flag.ContinueOnError)
	var o options
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	portFile := fs.String("port-file", "", "write HOST:PORT here once listening")
	lifetime := fs.Duration("max-lifetime", 5*time.Minute, "exit after this long, whatever happens")
	fs.StringVar(&o.shape, "shape", "loop", "loop, prefork (or worker, inside prefork)")
	fs.StringVar(&o.work, "work", "burn", "burn, write or scan")
	fs.DurationVar(&o.cost, "cost", 2*time.Millisecond, "CPU time per request (burn, write)")
	fs.IntVar(&o.helpers, "helpers", 11, "idle helper threads (loop)")
	fs.IntVar(&o.workers, "workers", 4, "worker processes (prefork)")
	fs.IntVar(&o.scanWork, "scan-work", 8, "rounds of arithmetic per list entry (scan)")
	fs.IntVar(&o.conns, "conns", 2, "connections each worker holds at most (prefork)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	var err error
	switch o.shape {
	case "loop":
		err = serveLoop(ctx, o, *listen, *portFile)
	case "prefork":
		err = prefork(ctx, o, *listen, *portFile, args)
	case "worker":
		err = worker(ctx, o)
	default:
		err = fmt.Errorf("--shape %q: want loop or prefork", o.shape)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuzoo:", err)
		return 2
	}
	return 0
}

// listenAndAnnounce listens on addr and writes the address to portFile.
func listenAndAnnounce(addr, portFile string) (*net.TCPListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if portFile != "" {
		tmp := portFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, portFile); err != nil {
			return nil, err
		}
	}
	return ln.(*net.TCPListener), nil
}

// serve runs an HTTP server on ln until ctx ends.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// serveLoop serves with one event-loop thread doing all the work.
func serveLoop(ctx context.Context, o options, addr, portFile string) error {
	w, err := newWorker(o)
	if err != nil {
		return err
	}
	jobs := make(chan chan struct{})
	go eventLoop(ctx, w, jobs)
	for range o.helpers {
		go idleHelper(ctx)
	}
	ln, err := listenAndAnnounce(addr, portFile)
	if err != nil {
		return err
	}
	return serve(ctx, ln, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		done := make(chan struct{})
		select {
		case jobs <- done:
		case <-r.Context().Done():
			return
		}
		<-done
		rw.Write([]byte("ok\n"))
	}))
}

// eventLoop runs the requests' work one at a time on its own OS thread.
func eventLoop(ctx context.Context, w *work, jobs chan chan struct{}) {
	runtime.LockOSThread()
	_ = os.WriteFile(fmt.Sprintf("/proc/self/task/%d/comm", unix.Gettid()), []byte("loop"), 0)
	for {
		select {
		case <-ctx.Done():
			return
		case done := <-jobs:
			w.do()
			close(done)
		}
	}
}

// idleHelper holds an OS thread that does nothing until ctx ends.
func idleHelper(ctx context.Context) {
	runtime.LockOSThread()
	<-ctx.Done()
}

// prefork listens, starts the workers with the listener as their fd 3,
// and waits for ctx to end; the workers die with it (Pdeathsig) or on its
// SIGTERM.
func prefork(ctx context.Context, o options, addr, portFile string, args []string) error {
	ln, err := listenAndAnnounce(addr, portFile)
	if err != nil {
		return err
	}
	f, err := ln.File()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var kids []*exec.Cmd
	defer func() {
		for _, k := range kids {
			k.Process.Signal(syscall.SIGTERM)
			k.Wait()
		}
	}()
	for range o.workers {
		cmd := exec.Command(self, append(args, "--shape", "worker")...)
		cmd.ExtraFiles = []*os.File{f}
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			return err
		}
		kids = append(kids, cmd)
	}
	<-ctx.Done()
	return nil
}

// worker serves on the inherited listener, one request at a time. Like a
// classic prefork server it accepts only while it holds fewer than
// --conns connections, so that the workers share the load.
func worker(ctx context.Context, o options) error {
	runtime.GOMAXPROCS(1)
	inner, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return err
	}
	ln := &limitListener{Listener: inner, slots: make(chan struct{}, o.conns)}
	w, err := newWorker(o)
	if err != nil {
		return err
	}
	return serve(ctx, ln, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		runtime.LockOSThread()
		w.do()
		runtime.UnlockOSThread()
		rw.Write([]byte("ok\n"))
	}))
}

// work is one request's work; it is used by one thread at a time.
type work struct {
	o    options
	fd   int    // the memfd that write fills
	buf  []byte // 64 KiB
	list []uint64
}

func newWorker(o options) (*work, error) {
	w := &work{o: o}
	switch o.work {
	case "burn", "scan":
	case "write":
		fd, err := unix.MemfdCreate("cpuzoo", unix.MFD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("memfd_create: %w", err)
		}
		w.fd, w.buf = fd, make([]byte, 64<<10)
	default:
		return nil, fmt.Errorf("--work %q: want burn, write or scan", o.work)
	}
	return w, nil
}

var sink atomic.Uint64

func (w *work) do() {
	switch w.o.work {
	case "burn":
		w.until(func() {
			x := sink.Load()
			for i := 0; i < 1000; i++ {
				x = x*6364136223846793005 + 1442695040888963407
			}
			sink.Store(x)
		})
	case "write":
		w.until(func() { _, _ = unix.Pwrite(w.fd, w.buf, 0) })
	case "scan":
		w.list = append(w.list, uint64(len(w.list)))
		x := uint64(1)
		for _, v := range w.list {
			for range w.o.scanWork {
				x = x*6364136223846793005 + v
			}
		}
		sink.Store(x)
	}
}

// until repeats step until the calling thread has used the work's cost of
// CPU time (or ten times that in wall time, on a starved machine).
func (w *work) until(step func()) {
	start, deadline := threadCPU(), time.Now().Add(10*w.o.cost)
	for threadCPU()-start < w.o.cost && time.Now().Before(deadline) {
		step()
	}
}

// threadCPU is the calling thread's user+system CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// limitListener accepts while fewer than cap(slots) of its connections
// are open.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
}

// slotConn gives its slot back when closed.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
