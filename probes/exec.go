package probes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// start runs Spec.Exec in its own process group, starts the goroutine that
// reaps it, and waits until the URL's port accepts connections.
func (t *Target) start(ctx context.Context) error {
	args, _ := splitCommand(t.spec.Exec) // validated in prepare
	addr, err := readyAddr(t.spec.URL)
	if err != nil {
		return field.Errorf("target.exec", "%q: %w", t.spec.Exec, err)
	}
	if addr != "" && accepts(addr) {
		return field.Errorf("target.exec", "%q: something already listens on %s; stop it, or use {target.pid} to test it instead", t.spec.Exec, addr)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.Stdout, err = t.execOutput(); err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	t.cmd, t.reaped = cmd, make(chan struct{})
	if err := t.fork(); err != nil {
		t.cmd, t.reaped = nil, nil // nothing to stop or reap
		t.closeLog()
		return field.Errorf("target.exec", "%q: %w", t.spec.Exec, err)
	}
	t.mu.Lock()
	id, idErr := t.identify(int32(cmd.Process.Pid))
	if idErr == nil {
		t.adopt(id)
	}
	t.mu.Unlock()
	if idErr == nil && t.spec.OnStart != nil {
		t.spec.OnStart(Started{PID: int(id.PID), StartTicks: id.Start})
	}
	if err := t.waitReady(ctx, addr); err != nil {
		_ = t.stop(context.Background())
		return field.Errorf("target.exec", "%q: pid %d %w", t.spec.Exec, cmd.Process.Pid, err)
	}
	t.log.Info("target started", zap.Int("pid", cmd.Process.Pid), zap.String("ready", addr))
	return nil
}

// fork starts t.cmd from a goroutine locked to its OS thread, which then
// reaps the target and only then exits. The kernel sends Pdeathsig when
// the thread that forked the child exits, not the process: forked from a
// thread that Go may end sooner (a locked goroutine's thread ends with
// it), the target would be killed in the middle of a run. Locked here,
// the thread lives as long as the target, and ends with soakd.
func (t *Target) fork() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends once the target is reaped
		if err := t.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		t.reap()
	}()
	return <-started
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

// reap waits for the exec'd process and records how it ended.
func (t *Target) reap() {
	err := t.cmd.Wait()
	info := exitInfo(t.cmd.ProcessState, err)
	t.mu.Lock()
	t.exit = &info
	t.alive = false
	t.mu.Unlock()
	t.closeLog()
	t.log.Info("target exited", zap.Int("pid", t.cmd.Process.Pid), zap.Int("code", info.Code), zap.String("signal", info.Signal))
	close(t.reaped) // last: a caller of stop may return, and its test end, once it is closed
}

// exitInfo turns a reaped process's state into an ExitInfo.
func exitInfo(ps *os.ProcessState, err error) ExitInfo {
	info := ExitInfo{Time: time.Now(), Code: -1}
	if ps == nil {
		return info
	}
	info.Known = true
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		info.Signal = ws.Signal().String()
	default:
		info.Code = ps.ExitCode()
	}
	return info
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
	pgid := t.cmd.Process.Pid
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
