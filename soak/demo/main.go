package demo

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
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// Main runs the demo target as a program: it parses args, listens, writes
// the port and pid files, and serves until SIGTERM, SIGINT, /ctl/exit or
// --max-lifetime. self is the argv prefix that re-executes this same
// program (for forked children), e.g. ["demo-target"] inside soakd. It
// returns the exit code.
func Main(args, self []string) int {
	fs := pflag.NewFlagSet("demo-target", pflag.ContinueOnError)
	var o Options
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	portFile := fs.String("port-file", "", "write HOST:PORT here once listening")
	pidFile := fs.String("pid-file", "", "write the PID here once listening")
	child := fs.Bool("child", false, "run as a forked child: sleep until the parent goes")
	lifetime := fs.Duration("max-lifetime", time.Hour, "exit after this long, whatever happens")
	fs.IntVar(&o.LeakBytes, "leak-bytes", 0, "bytes leaked per request to /")
	fs.DurationVar(&o.LeakAfter, "leak-after", 0, "leak --leak-bytes only once the server has run this long")
	fs.IntVar(&o.LeakFDEvery, "leak-fd-every", 0, "leak one fd every N requests to /")
	fs.DurationVar(&o.CPUPerRequest, "cpu-per-request", 0, "CPU burnt per request to /")
	fs.DurationVar(&o.Sleep, "sleep", 0, "sleep per request to /")
	fs.Uint64Var(&o.StallAt, "stall-at", 0, "stall once: request N to / and those that arrive during --stall-for wait until it is over")
	fs.DurationVar(&o.StallFor, "stall-for", 200*time.Millisecond, "how long the stall of --stall-at lasts")
	fs.IntVar(&o.CacheEntries, "cache-entries", 0, "the first N requests to / each add a cache entry")
	fs.IntVar(&o.CacheEntryBytes, "cache-entry-bytes", 4096, "bytes per cache entry")
	fs.IntVar(&o.BodyBytes, "body-bytes", 128, "response body size")
	fs.IntVar(&o.HeapLeakBytes, "heap-leak-bytes", 0, "bytes leaked per request to / in the Go heap, from one function")
	fs.BoolVar(&o.Pprof, "pprof", false, "serve net/http/pprof under /debug/pprof/")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "demo-target:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	if *child {
		return childMain(ctx)
	}
	kids := &children{self: self}
	defer kids.stop()
	exitCode := make(chan int, 1)
	o.Fork = kids.start
	o.Exit = func(code int) { exitCode <- code }
	if err := serve(ctx, o, *listen, *portFile, *pidFile, exitCode); err != nil {
		fmt.Fprintln(os.Stderr, "demo-target:", err)
		return 2
	}
	select {
	case code := <-exitCode:
		return code
	default:
		return 0
	}
}

func serve(ctx context.Context, o Options, addr, portFile, pidFile string, exitCode chan int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	if pidFile != "" {
		if err := writeAtomic(pidFile, strconv.Itoa(os.Getpid())+"\n"); err != nil {
			return err
		}
	}
	if portFile != "" {
		if err := writeAtomic(portFile, ln.Addr().String()+"\n"); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: NewServer(o), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case code := <-exitCode:
		exitCode <- code
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// writeAtomic writes s to path through a temporary file and a rename, so a
// reader never sees a half-written file.
func writeAtomic(path, s string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func childMain(ctx context.Context) int {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
			if os.Getppid() == 1 {
				return 0
			}
		}
	}
}

// children are the forked child processes, stopped when the parent ends.
type children struct {
	self []string
	mu   sync.Mutex // guards cmds
	cmds []*exec.Cmd
}

func (c *children) start(n int) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < n; i++ {
		cmd := exec.Command(exe, append(append([]string{}, c.self...), "--child")...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return err
		}
		c.cmds = append(c.cmds, cmd)
	}
	return nil
}

func (c *children) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range c.cmds {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, cmd := range c.cmds {
		cmd.Wait()
	}
	c.cmds = nil
}
