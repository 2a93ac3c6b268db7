package probes

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Started identifies a process soakd started: its PID and its start time
// in clock ticks after boot (field 22 of /proc/PID/stat), so that a PID
// the kernel handed out again is never taken for it.
type Started struct {
	PID        int
	StartTicks uint64
}

// StopOrphan stops what is left of a target that an earlier soakd started
// and did not stop (it was killed with SIGKILL, or the machine lost power
// mid-run). The target dies with soakd (Pdeathsig), but processes it
// started in its group do not. It signals, with SIGTERM and after grace
// with SIGKILL:
//   - the target's process group, when the process with s.PID is the one
//     soakd started (same start time);
//   - when no process holds s.PID any more, the members of the group s.PID
//     that started after the target did. Linux hands out no PID that is
//     still a process group's ID, so such a group is the target's own
//     unless it emptied, its ID was handed out again, and the new leader
//     died leaving members: a case this cannot tell apart.
//
// A PID held by another process (another start time) is left alone. It
// returns how many processes it signalled; procRoot is "/proc" but for
// tests.
func StopOrphan(procRoot string, s Started, grace time.Duration) (int, error) {
	if s.PID <= 1 {
		return 0, fmt.Errorf("stop orphan: pid %d: not a process soakd started", s.PID)
	}
	fs := newProcFS(procRoot)
	pids, err := orphans(fs, s)
	if err != nil || len(pids) == 0 {
		return 0, err
	}
	signalAll(fs, pids, s.PID, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && anyAlive(fs, pids) {
		time.Sleep(20 * time.Millisecond)
	}
	if anyAlive(fs, pids) {
		signalAll(fs, pids, s.PID, syscall.SIGKILL)
	}
	return len(pids), nil
}

// orphans returns the identities of what StopOrphan must stop.
func orphans(fs *procFS, s Started) ([]procID, error) {
	st, err := statOf(fs, int32(s.PID))
	switch {
	case err == nil && st.StartTime == s.StartTicks:
		return groupOf(fs, s, true)
	case err == nil:
		return nil, nil // the PID was handed out again
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH):
		return groupOf(fs, s, false)
	}
	return nil, err
}

// groupOf lists the live processes of the process group s.PID that did not
// start before s; withLeader keeps s itself.
func groupOf(fs *procFS, s Started, withLeader bool) ([]procID, error) {
	ents, err := os.ReadDir(fs.root)
	if err != nil {
		return nil, fmt.Errorf("stop orphan: %w", err)
	}
	var out []procID
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || (pid == s.PID && !withLeader) {
			continue
		}
		if pg, err := syscall.Getpgid(pid); err != nil || pg != s.PID {
			continue
		}
		st, err := statOf(fs, int32(pid))
		if err != nil || st.StartTime < s.StartTicks {
			continue
		}
		out = append(out, procID{PID: int32(pid), Start: st.StartTime})
	}
	return out, nil
}

// statOf reads and parses /proc/PID/stat; a zombie counts as gone.
func statOf(fs *procFS, pid int32) (statInfo, error) {
	b, err := fs.readPid(pid, "stat")
	if err != nil {
		return statInfo{}, err
	}
	st, err := parseStat(b)
	if err != nil {
		return statInfo{}, err
	}
	if st.State == 'Z' || st.State == 'X' {
		return statInfo{}, fmt.Errorf("pid %d: %w", pid, os.ErrNotExist)
	}
	return st, nil
}

// signalAll sends sig to each process that is still the one listed.
func signalAll(fs *procFS, ids []procID, pgid int, sig syscall.Signal) {
	for _, id := range ids {
		if st, err := statOf(fs, id.PID); err == nil && st.StartTime == id.Start {
			if pg, err := syscall.Getpgid(int(id.PID)); err == nil && pg == pgid {
				_ = syscall.Kill(int(id.PID), sig)
			}
		}
	}
}

// anyAlive says whether a listed process still runs.
func anyAlive(fs *procFS, ids []procID) bool {
	for _, id := range ids {
		if st, err := statOf(fs, id.PID); err == nil && st.StartTime == id.Start {
			return true
		}
	}
	return false
}
