package probes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Spec says how to find the target. At most one kind's field (see Kinds:
// PID, PIDFile, Match, Unit, Exec) may be set; with none, the process
// owning the listening TCP socket on URL's port is used when URL's host is
// local. Its YAML keys are a job's target fields in soakd's config.
//
// Spec is only how to find (or start) the process tree. runner.TargetSpec
// embeds it with how a run treats the target (no probe, dead grace, a
// remote source), runner.Spec (a whole run as the user writes it) holds
// that, and runner.Options.Target is this Spec once the run is checked.
type Spec struct {
	// PID is a fixed process; when it dies the target stays dead.
	PID int `yaml:"pid"`
	// PIDFile is re-read on every sample: a restarted daemon writes a new PID.
	PIDFile string `yaml:"pidfile"`
	// Match is a regexp against the full command line (arguments joined by
	// spaces); it must match exactly one root process (a match whose parent
	// also matches is not a root). soakd and its ancestors never match.
	Match string `yaml:"match"`
	// Unit is a systemd unit, e.g. "nginx.service" ("nginx" means the
	// same): the processes of its cgroup v2 directory.
	Unit string `yaml:"unit"`
	// Exec is a command line, split shell-like (no shell); soakd starts it.
	Exec string `yaml:"exec"`
	// ExecLog is the file for the exec'd target's stdout and stderr; ""
	// discards the output unless ExecShow.
	ExecLog string `yaml:"exec_log"`
	// ExecShow passes the target's output through to soakd's stderr.
	ExecShow bool `yaml:"exec_show"`
	// OnStart, when set, is called once with the identity of the process
	// soakd started for Exec, before the wait for readiness: a caller
	// that records it can stop the target after a crash (StopOrphan).
	OnStart func(Started) `yaml:"-" json:"-"`
	// ReadyTimeout bounds the wait, for Exec, until URL's port accepts
	// connections (default 10s).
	ReadyTimeout time.Duration `yaml:"ready_timeout"`
	// StopGrace is how long Close waits after SIGTERM before SIGKILL, for
	// Exec (default 5s).
	StopGrace time.Duration `yaml:"stop_grace"`
	// URL is the load URL: its host:port is used for the default lookup and
	// for Exec readiness.
	URL string `yaml:"-"`
	// ProcRoot is the procfs root, default "/proc"; tests point it at
	// fixtures.
	ProcRoot string `yaml:"-"`
	// CgroupRoot is the cgroup v2 root, default "/sys/fs/cgroup".
	CgroupRoot string `yaml:"-"`
}

// ExitInfo tells when the target went away and, when soakd started it,
// how it ended.
type ExitInfo struct {
	// Time is when the exit was noticed (or reaped, for Exec).
	Time time.Time
	// Code is the exit status; -1 when killed by a signal or unknown.
	Code int
	// Signal names the signal that killed it, e.g. "terminated"; "" if none.
	Signal string
	// Known says Code and Signal are real: soakd started and reaped it.
	Known bool
}

// Target is the resolved process (tree) under test. Its methods are safe
// for concurrent use.
type Target struct {
	spec    Spec
	log     *zap.Logger
	kind    *Kind
	re      *regexp.Regexp
	port    uint16
	cgroup  string // unit: the cgroup v2 directory
	selfPID int32

	mu          sync.Mutex // guards all below
	fs          *procFS
	root        procID
	cmdline     string
	incarnation int
	alive       bool
	exit        *ExitInfo
	pids        []int32       // unit: last cgroup.procs
	members     []proc        // unit: its processes, with their stat
	cmd         *exec.Cmd     // exec: the watcher (watcher.go)
	pid         int           // exec: the target's PID, its process group's ID
	control     *os.File      // exec: closing it releases the watcher
	reaped      chan struct{} // exec: closed once the target's end is known
	watcherGone chan struct{} // exec: closed once the watcher is reaped
	logFile     *os.File
}

// rootState is the target's identity at one sample.
type rootState struct {
	ID          procID
	Incarnation int
	Alive       bool
	Members     []proc // unit targets: the cgroup's processes, read at this sample
}

// Open validates spec, resolves the target (or starts Exec and waits for
// readiness). Errors are one line naming the flag to use or the missing
// capability.
func Open(ctx context.Context, spec Spec, log *zap.Logger) (*Target, error) {
	spec = withDefaults(spec)
	t := &Target{spec: spec, log: log, selfPID: int32(os.Getpid()), fs: newProcFS(spec.ProcRoot)}
	if err := t.validate(); err != nil {
		return nil, err
	}
	if t.kind.Starts {
		if err := t.start(ctx); err != nil {
			return nil, err
		}
		return t, nil
	}
	id, err := t.locate(ctx, true)
	if err != nil {
		return nil, err
	}
	t.adopt(id)
	return t, nil
}

func withDefaults(s Spec) Spec {
	if s.ProcRoot == "" {
		s.ProcRoot = "/proc"
	}
	if s.CgroupRoot == "" {
		s.CgroupRoot = "/sys/fs/cgroup"
	}
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = 10 * time.Second
	}
	if s.StopGrace <= 0 {
		s.StopGrace = 5 * time.Second
	}
	return s
}

// validate checks the spec (one kind, its value) and prepares the kind.
func (t *Target) validate() error {
	if err := t.spec.Check().Err(); err != nil {
		return err
	}
	t.kind = t.spec.Kind()
	if t.kind.prepare == nil {
		return nil
	}
	return t.kind.prepare(t)
}

// adopt makes id the root, as a new incarnation. Callers hold mu, or own t
// exclusively (Open).
func (t *Target) adopt(id procID) {
	t.root = id
	t.incarnation++
	t.alive = true
	t.exit = nil
	t.cmdline = t.readCmdline(id.PID)
	if t.incarnation > 1 {
		t.log.Info("target restarted", zap.Int32("pid", id.PID), zap.Int("incarnation", t.incarnation))
	}
}

// current resolves the root again for a sample: a restart (pidfile, match,
// unit, port) shows up as a new identity and a new incarnation; a gone root
// records ExitInfo.
func (t *Target) current(now time.Time) rootState {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, err := t.locate(context.Background(), false)
	switch {
	case err == nil && (id != t.root || !t.alive):
		t.adopt(id)
	case err != nil && t.alive:
		t.alive = false
		if t.exit == nil {
			t.exit = &ExitInfo{Time: now, Code: -1}
		}
		t.log.Warn("target gone", zap.Int32("pid", t.root.PID), zap.Int("incarnation", t.incarnation), zap.Error(err))
	}
	members := append([]proc(nil), t.members...) // locateUnit reuses t.members
	return rootState{ID: t.root, Incarnation: t.incarnation, Alive: t.alive, Members: members}
}

// Describe names the target for the report, e.g.
// "pid 1234 (nginx: master process /usr/sbin/nginx)".
func (t *Target) Describe() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := fmt.Sprintf("pid %d (%s)", t.root.PID, t.cmdline)
	if t.kind.describe != nil {
		d = t.kind.describe(&t.spec) + d
	}
	if !t.alive {
		d += ", gone"
	}
	return d
}

// Exit returns nil while the target is alive; once it is gone, when that
// was noticed and, for a target soakd started, its exit status.
func (t *Target) Exit() *ExitInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exit == nil {
		return nil
	}
	e := *t.exit
	return &e
}

// Close stops a target soakd started (SIGTERM, SIGKILL after StopGrace)
// and reaps it; for any other target it does nothing.
func (t *Target) Close(ctx context.Context) error {
	if !t.kind.Starts {
		return nil
	}
	return t.stop(ctx)
}

// readCmdline returns the command line of pid, shortened for reports.
func (t *Target) readCmdline(pid int32) string { return shownCmdline(t.fs, pid) }

// Cmdline returns pid's command line as reports show it: cut at 120
// bytes, "[comm]" for a kernel thread, "?" when it cannot be read.
func Cmdline(pid int32) string { return shownCmdline(newProcFS("/proc"), pid) }

// MaxCmdline is the length at which Cmdline cuts a command line.
const MaxCmdline = 120

func shownCmdline(fs *procFS, pid int32) string {
	args, err := cmdlineOf(fs, pid)
	if err != nil || len(args) == 0 {
		b, err := fs.readPid(pid, "stat")
		if s, perr := parseStat(b); err == nil && perr == nil {
			return "[" + s.Comm + "]"
		}
		return "?"
	}
	return shorten(strings.Join(args, " "), MaxCmdline)
}

// shorten cuts s to at most n bytes, ending in "..." when cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
