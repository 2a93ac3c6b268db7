package probes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/field"
)

// errZombie says a process has exited but is not reaped yet.
var errZombie = errors.New("exited (zombie, not reaped yet)")

// identify reads pid's stat and returns its identity; a zombie counts as
// gone.
func (t *Target) identify(pid int32) (procID, error) {
	b, err := t.fs.readPid(pid, "stat")
	if err != nil {
		return procID{}, err
	}
	s, err := parseStat(b)
	if err != nil {
		return procID{}, fmt.Errorf("%s: %w", t.fs.pidPath(pid, "stat"), err)
	}
	if s.State == 'Z' || s.State == 'X' {
		return procID{}, fmt.Errorf("pid %d: %w", pid, errZombie)
	}
	return procID{PID: pid, Start: s.StartTime}, nil
}

// locate finds the root now. initial is true in Open, where errors must
// say which flag to use; later calls keep an alive root of a match or port
// target without searching again (a restart shows up as its death).
func (t *Target) locate(ctx context.Context, initial bool) (procID, error) {
	if !initial && t.alive && !t.kind.follow {
		id, err := t.identify(t.root.PID)
		if err == nil && id == t.root {
			return id, nil
		}
		if t.kind.once {
			return procID{}, fmt.Errorf("pid %d is gone", t.root.PID)
		}
	}
	return t.kind.locate(t, ctx)
}

func (t *Target) locatePID() (procID, error) {
	if t.incarnation > 0 {
		return procID{}, fmt.Errorf("pid %d is gone", t.root.PID)
	}
	id, err := t.identify(int32(t.spec.PID))
	if err != nil {
		return id, field.Errorf("target.pid", "%d: no such process (%w)", t.spec.PID, err)
	}
	return id, nil
}

func (t *Target) locatePIDFile() (procID, error) {
	b, err := os.ReadFile(t.spec.PIDFile)
	if err != nil {
		return procID{}, field.Errorf("target.pidfile", "%s: %w", t.spec.PIDFile, err)
	}
	pid, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 32)
	if err != nil || pid <= 0 {
		return procID{}, field.Errorf("target.pidfile", "%s: %q is not a process ID", t.spec.PIDFile, bytes.TrimSpace(b))
	}
	id, err := t.identify(int32(pid))
	if err != nil {
		return id, field.Errorf("target.pidfile", "%s: pid %d: no such process (%w)", t.spec.PIDFile, pid, err)
	}
	return id, nil
}

// locateMatch finds the one root process whose command line matches.
func (t *Target) locateMatch(ctx context.Context) (procID, error) {
	found, err := t.matching(ctx)
	if err != nil {
		return procID{}, field.Errorf("target.match", "%q: %w", t.spec.Match, err)
	}
	roots := rootsOf(found)
	if len(roots) != 1 {
		return procID{}, field.Errorf("target.match", "%q: %d root processes match, want 1: %s; refine the regexp or use {target.pid}",
			t.spec.Match, len(roots), describeProcs(roots))
	}
	return roots[0].ID, nil
}

// candidate is a process found by a search, with its parent and command
// line.
type candidate struct {
	ID      procID
	PPID    int32
	Cmdline string
}

// rootsOf keeps the candidates whose parent is not a candidate too.
func rootsOf(c []candidate) []candidate {
	in := make(map[int32]bool, len(c))
	for _, p := range c {
		in[p.ID.PID] = true
	}
	var roots []candidate
	for _, p := range c {
		if !in[p.PPID] {
			roots = append(roots, p)
		}
	}
	return roots
}

// describeProcs lists candidates for an error message.
func describeProcs(c []candidate) string {
	if len(c) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(c))
	for i, p := range c {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(c)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("pid %d (%s)", p.ID.PID, shorten(p.Cmdline, 60)))
	}
	return strings.Join(parts, ", ")
}

// candidateOf reads pid's identity, parent and command line.
func (t *Target) candidateOf(pid int32) (candidate, bool) {
	c, ok := t.statCandidate(pid)
	if !ok {
		return c, false
	}
	args, err := cmdlineOf(t.fs, pid)
	if err != nil {
		return candidate{}, false
	}
	c.Cmdline = strings.Join(args, " ")
	return c, true
}

// statCandidate reads pid's identity and parent; zombies are left out.
func (t *Target) statCandidate(pid int32) (candidate, bool) {
	b, err := t.fs.readPid(pid, "stat")
	if err != nil {
		return candidate{}, false
	}
	s, err := parseStat(b)
	if err != nil || s.State == 'Z' {
		return candidate{}, false
	}
	return candidate{ID: procID{PID: pid, Start: s.StartTime}, PPID: s.PPID}, true
}
