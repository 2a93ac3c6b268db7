// Command recycle is the test suites' leaking server that hides its leak by
// recycling its processes. A master listens and keeps --workers worker
// processes (re-executions of itself) serving HTTP on the listening socket
// it hands them. Each worker leaks --leak-bytes per request, outside the
// Go heap and touched so that it is resident, and an fd every
// --leak-fd-every requests, and never frees them. With --slow-per-request
// D, a worker's n-th request waits n·D before it answers: a worker that
// slows as it ages, so that an open loop's connections pile up in it
// through its life (each in-flight request holds one). The master replaces a
// worker that exits, so the tree's total stays bounded while every worker
// grows:
//
//   - prefork, as Apache's MaxConnectionsPerChild or gunicorn's
//     --max-requests: --workers 4 --max-requests 100 (a worker exits after
//     serving that many requests);
//   - supervisor, as systemd's Restart= or runit over a leaking child:
//     --workers 1 --restart-every 2s (the master stops its child with
//     SIGTERM at that age and starts a new one). The master stays the
//     root, with the same PID throughout.
//
// The master writes HOST:PORT to --port-file once listening, stops its
// workers and exits on SIGTERM or SIGINT, and exits after --max-lifetime
// whatever happens. Workers get SIGKILL if the master dies.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/soakd/soakd/soak/demo"
)

type options struct {
	listen, portFile string
	workers          int
	maxRequests      int
	restartEvery     time.Duration
	leakBytes        int
	leakFDEvery      int
	slowPerRequest   time.Duration
	lifetime         time.Duration
	worker           bool
	workerArgs       []string // the flags passed on to each worker
}

// restartDelay is the pause before a worker that exited is replaced, and
// stopGrace how long workers have to exit on SIGTERM before SIGKILL.
const (
	restartDelay = 10 * time.Millisecond
	stopGrace    = 5 * time.Second
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recycle:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.lifetime)
	defer cancel()
	if o.worker {
		err = workerMain(ctx, o)
	} else {
		err = masterMain(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "recycle:", err)
		return 1
	}
	return 0
}

// parseArgs reads "--name value" pairs; the worker gets the per-worker
// ones passed on.
func parseArgs(args []string) (options, error) {
	o := options{listen: "127.0.0.1:0", workers: 1, lifetime: 10 * time.Minute}
	for i := 0; i < len(args); i++ {
		name := args[i]
		if name == "--worker" {
			o.worker = true
			continue
		}
		if i+1 == len(args) {
			return o, fmt.Errorf("%s: missing value", name)
		}
		val := args[i+1]
		i++
		var err error
		switch name {
		case "--listen":
			o.listen = val
		case "--port-file":
			o.portFile = val
		case "--workers":
			o.workers, err = strconv.Atoi(val)
		case "--max-requests":
			o.maxRequests, err = strconv.Atoi(val)
			o.workerArgs = append(o.workerArgs, name, val)
		case "--leak-bytes":
			o.leakBytes, err = strconv.Atoi(val)
			o.workerArgs = append(o.workerArgs, name, val)
		case "--leak-fd-every":
			o.leakFDEvery, err = strconv.Atoi(val)
			o.workerArgs = append(o.workerArgs, name, val)
		case "--slow-per-request":
			o.slowPerRequest, err = time.ParseDuration(val)
			o.workerArgs = append(o.workerArgs, name, val)
		case "--restart-every":
			o.restartEvery, err = time.ParseDuration(val)
		case "--max-lifetime":
			o.lifetime, err = time.ParseDuration(val)
			o.workerArgs = append(o.workerArgs, name, val)
		default:
			return o, fmt.Errorf("unknown flag %s", name)
		}
		if err != nil {
			return o, fmt.Errorf("%s %q: %w", name, val, err)
		}
	}
	if o.workers < 1 {
		return o, fmt.Errorf("--workers %d: want at least 1", o.workers)
	}
	return o, nil
}

// masterMain listens, writes the port file and keeps o.workers workers
// running until ctx ends.
func masterMain(ctx context.Context, o options) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer lf.Close()
	if o.portFile != "" {
		if err := os.WriteFile(o.portFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	m := &master{o: o, listener: lf, exited: make(chan *exec.Cmd, o.workers)}
	defer m.stopAll()
	for range o.workers {
		if err := m.start(); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.exited:
			if ctx.Err() != nil {
				return nil
			}
			time.Sleep(restartDelay)
			if err := m.start(); err != nil {
				return err
			}
		}
	}
}

// master keeps the workers.
type master struct {
	o        options
	listener *os.File
	exited   chan *exec.Cmd // a worker was reaped

	mu   sync.Mutex // guards live
	live map[*exec.Cmd]chan struct{}
}

// start runs one worker on the listening socket (its fd 3), reaps it in a
// goroutine, and with --restart-every stops it at that age.
func (m *master) start() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append([]string{"--worker"}, m.o.workerArgs...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{m.listener}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	m.mu.Lock()
	if m.live == nil {
		m.live = map[*exec.Cmd]chan struct{}{}
	}
	m.live[cmd] = done
	m.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(done)
		m.mu.Lock()
		delete(m.live, cmd)
		m.mu.Unlock()
		m.exited <- cmd
	}()
	if m.o.restartEvery > 0 {
		go func() {
			select {
			case <-time.After(m.o.restartEvery):
				_ = cmd.Process.Signal(syscall.SIGTERM)
			case <-done:
			}
		}()
	}
	return nil
}

// stopAll sends SIGTERM to every live worker, SIGKILL after the grace,
// and waits until all are reaped.
func (m *master) stopAll() {
	m.mu.Lock()
	live := make(map[*exec.Cmd]chan struct{}, len(m.live))
	for c, d := range m.live {
		live[c] = d
	}
	m.mu.Unlock()
	for c := range live {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	// One grace for all: a channel from time.After fires once, and a
	// second worker still alive after it would be waited for forever.
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	expired := false
	for c, done := range live {
		if !expired {
			select {
			case <-done:
				continue
			case <-grace.C:
				expired = true
			}
		}
		_ = c.Process.Kill()
		<-done
	}
}

// workerMain serves on the inherited listener until it has served
// --max-requests requests or ctx ends, then finishes the requests in
// flight and returns.
func workerMain(ctx context.Context, o options) error {
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return err
	}
	w := &worker{o: o}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	w.full = make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-w.full:
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// worker serves requests and leaks on each.
type worker struct {
	o        options
	served   atomic.Int64
	full     chan struct{} // closed when --max-requests is reached
	fullOnce sync.Once
	arena    demo.Arena
	fdMu     sync.Mutex // guards fds
	fds      []*os.File
}

func (w *worker) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	n := w.served.Add(1)
	if err := w.arena.Take(w.o.leakBytes); err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	if w.o.leakFDEvery > 0 && n%int64(w.o.leakFDEvery) == 0 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		w.fdMu.Lock()
		w.fds = append(w.fds, f)
		w.fdMu.Unlock()
	}
	if w.o.slowPerRequest > 0 {
		time.Sleep(time.Duration(n) * w.o.slowPerRequest)
	}
	if w.o.maxRequests > 0 && n >= int64(w.o.maxRequests) {
		rw.Header().Set("Connection", "close")
		w.fullOnce.Do(func() { close(w.full) })
	}
	fmt.Fprintf(rw, "pid %d request %d\n", os.Getpid(), n)
}
