package probes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// start runs Spec.Exec through the watcher (watcher.go), which starts it
// in its own process group and kills all it started when soakd releases
// it or dies; start then waits until the URL's port accepts connections.
func (t *Target) start(ctx context.Context) error {
	args, _ := splitCommand(t.spec.Exec) // validated in prepare
	addr, err := readyAddr(t.spec.URL)
	if err != nil {
		return field.Errorf("target.exec", "%q: %w", t.spec.Exec, err)
	}
	if addr != "" && accepts(addr) {
		return field.Errorf("target.exec", "%q: something already listens on %s; stop it, or use {target.pid} to test it instead", t.spec.Exec, addr)
	}
	resolved := exec.Command(args[0]) // the PATH lookup, with its errors
	if resolved.Err != nil {
		return field.Errorf("target.exec", "%q: %w", t.spec.Exec, resolved.Err)
	}
	out, err := t.execOutput()
	if err != nil {
		return err
	}
	if err := t.startWatcher(resolved.Path, args, out); err != nil {
		t.closeLog()
		return field.Errorf("target.exec", "%q: %w", t.spec.Exec, err)
	}
	t.mu.Lock()
	id, idErr := t.identify(int32(t.pid))
	if idErr == nil {
		t.adopt(id)
	}
	t.mu.Unlock()
	if idErr == nil && t.spec.OnStart != nil {
		t.spec.OnStart(Started{PID: int(id.PID), StartTicks: id.Start})
	}
	if err := t.waitReady(ctx, addr); err != nil {
		_ = t.stop(context.Background())
		return field.Errorf("target.exec", "%q: pid %d %w", t.spec.Exec, t.pid, err)
	}
	t.log.Info("target started", zap.Int("pid", t.pid), zap.Int("watcher", t.cmd.Process.Pid), zap.String("ready", addr))
	return nil
}

// startWatcher starts soakd again as the watcher of the target path argv,
// in a session of its own (a Ctrl-C on soakd's terminal reaches neither),
// learns the target's PID, and starts the goroutine that waits for the
// target's end and then for the watcher's.
func (t *Target) startWatcher(path string, argv []string, out io.Writer) error {
	controlR, controlW, err := os.Pipe()
	if err != nil {
		return err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		controlR.Close()
		controlW.Close()
		return err
	}
	cmd := exec.Command("/proc/self/exe", append([]string{path}, argv...)...)
	cmd.Args[0] = watcherArg0
	cmd.Env = append(os.Environ(), watcherEnv+"=1")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{controlR, statusW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	controlR.Close() // the watcher's ends: soakd keeps only its own
	statusW.Close()
	if err != nil {
		controlW.Close()
		statusR.Close()
		return fmt.Errorf("starting the exec watcher: %w", err)
	}
	status := bufio.NewReader(statusR)
	pid, err := readPID(status)
	if err != nil {
		controlW.Close()
		statusR.Close()
		_ = cmd.Wait()
		return err
	}
	t.cmd, t.pid, t.control = cmd, pid, controlW
	t.reaped, t.watcherGone = make(chan struct{}), make(chan struct{})
	go t.reap(status, statusR)
	return nil
}

// readyAddr is the host:port of the load URL, or "" when there is no URL.
func readyAddr(rawURL string) (string, error) {
	if rawURL == "" {
		return "", nil
	}
	a, err := urlx.ParseAddr(rawURL)
	if err != nil {
		return "", fmt.Errorf("URL %w", err)
	}
	return a.String(), nil
}

// execOutput opens where the target's output goes.
func (t *Target) execOutput() (io.Writer, error) {
	var w []io.Writer
	if t.spec.ExecLog != "" {
		f, err := os.OpenFile(t.spec.ExecLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, field.Errorf("target.exec_log", "%w", err)
		}
		t.logFile = f
		w = append(w, f)
	}
	if t.spec.ExecShow {
		w = append(w, os.Stderr)
	}
	switch len(w) {
	case 0:
		return nil, nil // exec sends it to /dev/null
	case 1:
		return w[0], nil
	}
	return io.MultiWriter(w...), nil
}

func (t *Target) closeLog() {
	if t.logFile != nil {
		_ = t.logFile.Close()
	}
}

// reap records the target's end as the watcher reports it, then waits for
// the watcher to exit and reaps it.
func (t *Target) reap(status *bufio.Reader, f *os.File) {
	info := readExit(status)
	t.mu.Lock()
	t.exit = &info
	t.alive = false
	t.mu.Unlock()
	t.log.Info("target exited", zap.Int("pid", t.pid), zap.Int("code", info.Code), zap.String("signal", info.Signal))
	close(t.reaped)                    // a caller of stop may go on once it is closed
	_, _ = io.Copy(io.Discard, status) // EOF: the watcher exited
	f.Close()
	_ = t.cmd.Wait()
	t.closeLog()
	close(t.watcherGone) // last: a caller of stop may return, and its test end, once it is closed
}

// waitReady polls addr until it accepts a connection, the process exits,
// ReadyTimeout passes or ctx ends.
func (t *Target) waitReady(ctx context.Context, addr string) error {
	if addr == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.spec.ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if accepts(addr) {
			return nil
		}
		select {
		case <-t.reaped:
			e := t.Exit()
			return fmt.Errorf("exited (code %d, signal %q) before accepting connections on %s", e.Code, e.Signal, addr)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("did not accept connections on %s within %s ({target.ready_timeout}); stopped it", addr, t.spec.ReadyTimeout)
			}
			return fmt.Errorf("waiting for %s: %w; stopped it", addr, ctx.Err())
		case <-tick.C:
		}
	}
}

// accepts says whether addr accepts a TCP connection now.
func accepts(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// stop sends SIGTERM to the target's process group, waits up to StopGrace
// for the target to be reaped and the rest of its group to exit, then sends
// SIGKILL to what is left of the group and waits for the reaper. The whole
// group is signalled, not only the process soakd started: a wrapper script
// or a target that already died may leave members behind, which would
// otherwise outlive soakd (and keep the port).
func (t *Target) stop(ctx context.Context) error {
	if t.cmd == nil {
		return nil
	}
	defer t.release()
	pgid := t.pid
	t.signalGroup(pgid, syscall.SIGTERM)
	grace := time.NewTimer(t.spec.StopGrace)
	defer grace.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for t.groupLeft(pgid) {
		select {
		case <-grace.C:
			return t.kill(pgid)
		case <-ctx.Done():
			return t.kill(pgid)
		case <-poll.C:
		case <-t.reaped:
		}
	}
	return nil
}

// release closes the watcher's control pipe, so that it kills what is
// left below it (a process that left the target's group), and waits until
// the watcher is reaped.
func (t *Target) release() {
	_ = t.control.Close()
	<-t.watcherGone
}

// groupLeft says whether the target is not reaped yet or its process
// group (whose ID is the target's PID) still holds a process. Once the
// target is reaped its PID may be handed out again, but not while it is
// still a group's ID: a process holding that PID means the group is empty.
func (t *Target) groupLeft(pgid int) bool {
	select {
	case <-t.reaped:
	default:
		return true
	}
	if !errors.Is(syscall.Kill(pgid, 0), syscall.ESRCH) {
		return false // the PID belongs to a new process: the group is empty
	}
	return syscall.Kill(-pgid, 0) == nil
}

// signalGroup sends sig to the target's process group while it holds
// anything soakd started.
func (t *Target) signalGroup(pgid int, sig syscall.Signal) {
	if !t.groupLeft(pgid) {
		return
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.log.Warn("signal the target's process group", zap.Int("pgid", pgid), zap.Stringer("signal", sig), zap.Error(err))
	}
}

// kill sends SIGKILL to the target's process group and waits for the
// reaper.
func (t *Target) kill(pgid int) error {
	t.log.Warn("target ignored SIGTERM; sending SIGKILL to its process group", zap.Int("pid", pgid), zap.Duration("grace", t.spec.StopGrace))
	t.signalGroup(pgid, syscall.SIGKILL)
	<-t.reaped
	return nil
}
