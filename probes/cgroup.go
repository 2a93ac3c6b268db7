package probes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/field"
)

// findUnit sets t.cgroup to the cgroup v2 directory named after the unit,
// searched under CgroupRoot. A directory with cgroup.controllers (cgroup
// v2) wins over a v1 one of the same name.
func (t *Target) findUnit() error {
	unit := t.spec.Unit
	if !strings.Contains(unit, ".") {
		unit += ".service"
		t.spec.Unit = unit
	}
	var v2, any string
	errFound := errors.New("found")
	err := filepath.WalkDir(t.spec.CgroupRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != unit {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, "cgroup.controllers")); err == nil {
			v2 = path
			return errFound
		}
		if any == "" {
			any = path
		}
		return fs.SkipDir
	})
	if err != nil && !errors.Is(err, errFound) {
		return field.Errorf("target.unit", "%s: search %s: %w", unit, t.spec.CgroupRoot, err)
	}
	switch {
	case v2 != "":
		t.cgroup = v2
	case any != "":
		t.cgroup = any
	default:
		return field.Errorf("target.unit", "%s: no cgroup directory of that name under %s; is the unit running (systemctl status %s)?", unit, t.spec.CgroupRoot, unit)
	}
	return nil
}

// locateUnit reads cgroup.procs and each member's stat, kept in t.members
// for the sample; the root is the oldest live member whose parent is
// outside the cgroup (the unit's main process, normally).
func (t *Target) locateUnit() (procID, error) {
	path := filepath.Join(t.cgroup, "cgroup.procs")
	b, err := t.fs.read(path)
	if err != nil {
		return procID{}, field.Errorf("target.unit", "%s: %w", t.spec.Unit, err)
	}
	t.pids = parsePIDList(b, t.pids[:0])
	t.members = t.members[:0]
	var cands []candidate
	for _, pid := range t.pids {
		b, err := t.fs.readPid(pid, "stat")
		if err != nil {
			continue // exited meanwhile
		}
		s, err := parseStat(b)
		if err != nil {
			continue
		}
		t.members = append(t.members, proc{ID: procID{PID: pid, Start: s.StartTime}, Stat: s})
		if s.State != 'Z' {
			cands = append(cands, candidate{ID: procID{PID: pid, Start: s.StartTime}, PPID: s.PPID})
		}
	}
	roots := rootsOf(cands)
	if len(roots) == 0 {
		return procID{}, field.Errorf("target.unit", "%s: no processes in %s; is the unit running?", t.spec.Unit, path)
	}
	oldest := roots[0]
	for _, r := range roots[1:] {
		if r.ID.Start < oldest.ID.Start {
			oldest = r
		}
	}
	return oldest.ID, nil
}

// parsePIDList parses one PID per line (cgroup.procs), skipping junk.
func parsePIDList(b []byte, out []int32) []int32 {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if pid, ok := atoiPID(bytes.TrimSpace(line)); ok {
			out = append(out, pid)
		}
	}
	return out
}

// cgroupMem is a cgroup v2 memory reading, bytes.
type cgroupMem struct {
	Current, Max, Anon, File uint64
}

// readCgroupMem reads memory.current, memory.max and memory.stat of dir.
func readCgroupMem(p *procFS, dir string) (cgroupMem, error) {
	var m cgroupMem
	b, err := p.read(dir + "/memory.current")
	if err != nil {
		return m, err
	}
	if m.Current, err = parseUintField(b); err != nil {
		return m, fmt.Errorf("%s/memory.current: %w", dir, err)
	}
	if b, err = p.read(dir + "/memory.max"); err != nil {
		return m, err
	}
	if m.Max, err = parseMemMax(b); err != nil {
		return m, fmt.Errorf("%s/memory.max: %w", dir, err)
	}
	if b, err = p.read(dir + "/memory.stat"); err != nil {
		return m, err
	}
	if m.Anon, m.File, err = parseMemoryStat(b); err != nil {
		return m, fmt.Errorf("%s/memory.stat: %w", dir, err)
	}
	return m, nil
}

// parseMemMax parses memory.max: a byte count, or "max" for no limit (0).
func parseMemMax(b []byte) (uint64, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "max" {
		return 0, nil
	}
	return strconv.ParseUint(string(b), 10, 64)
}

// parseMemoryStat returns the anon and file lines of memory.stat.
func parseMemoryStat(b []byte) (anon, file uint64, err error) {
	seen := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		key, val, ok := bytes.Cut(line, []byte(" "))
		if !ok || (string(key) != "anon" && string(key) != "file") {
			continue
		}
		v, err := parseUintField(val)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		if string(key) == "anon" {
			anon = v
		} else {
			file = v
		}
		seen++
	}
	if seen != 2 {
		return 0, 0, fmt.Errorf("%d of 2 fields (anon, file)", seen)
	}
	return anon, file, nil
}
