package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/soakd/soakd/soak/field"
)

// ExitTempFail is the exit status (sysexits' EX_TEMPFAIL) by which an exec
// sink's command asks for a retry; any other non-zero status is a final
// failure.
const ExitTempFail = 75

// Exec runs a command (argv, no shell) with the JSON Payload on stdin. It
// runs in its own process group, which is killed at the timeout.
type Exec struct {
	name    string
	argv    []string
	timeout time.Duration
	now     func() time.Time
}

var _ Sink = (*Exec)(nil)

// NewExec returns an exec sink running argv with timeout (zero means
// DefaultTimeout).
func NewExec(name string, argv []string, timeout time.Duration) (*Exec, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("exec %s: empty command", name)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Exec{name: name, argv: append([]string(nil), argv...), timeout: timeout, now: time.Now}, nil
}

// Name returns the sink's configured name.
func (e *Exec) Name() string { return e.name }

// Send runs the command once with the payload of alerts on stdin.
func (e *Exec) Send(ctx context.Context, alerts ...Alert) (bool, error) {
	body, err := json.Marshal(NewPayload(e.name, e.now(), alerts))
	if err != nil {
		return false, fmt.Errorf("exec %s: encode: %w", e.name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var stderr tailBuffer
	cmd := e.command(ctx, body, &stderr)
	err = cmd.Run()
	if err == nil {
		return false, nil
	}
	if ctx.Err() != nil {
		return true, fmt.Errorf("exec %s: %s: %w", e.name, e.argv[0], ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode() == ExitTempFail, fmt.Errorf("exec %s: %s: %w: stderr %q", e.name, e.argv[0], err, stderr.String())
	}
	return false, fmt.Errorf("exec %s: %w", e.name, err)
}

func (e *Exec) command(ctx context.Context, stdin []byte, stderr *tailBuffer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.argv[0], e.argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "SOAKD_SINK="+e.name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole group: a shell's children must not outlive it.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// A grandchild holding stderr open must not hold Run past the kill.
	cmd.WaitDelay = time.Second
	return cmd
}

// tailBuffer keeps the last maxErrorBody bytes written to it.
type tailBuffer struct {
	b []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - maxErrorBody; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }

// ExecConfig are the settings of a sink of type exec.
type ExecConfig struct {
	// Command is the argv run (no shell).
	Command []string `yaml:"command"`
}

// Validate checks the command.
func (c *ExecConfig) Validate(p string, es *field.Errors) {
	if len(c.Command) == 0 || c.Command[0] == "" {
		es.Add(p+".command", "required for type %s (an argv list, no shell)", TypeExec)
	}
}

// Build returns the exec sink; the send timeout is the sink's.
func (c *ExecConfig) Build(name string, ho HTTPOptions) (Sink, error) {
	return NewExec(name, c.Command, ho.Timeout)
}
