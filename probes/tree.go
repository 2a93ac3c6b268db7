package probes

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// procID identifies a process across samples: a PID the kernel reuses has a
// different start time, so it is never taken for the same process.
type procID struct {
	PID   int32
	Start uint64 // field 22 of stat, clock ticks after boot
}

// proc is one process of the tree in one sample, with its parsed stat.
type proc struct {
	ID   procID
	Stat statInfo
}

// fullRescanEvery bounds how long a PID cached as "not in the tree" is
// trusted. See walker.
const fullRescanEvery = 60

// walker finds the root's descendants by reading the ppid in each
// /proc/PID/stat, without forking (gopsutil's Children runs pgrep, and this
// kernel has no /proc/PID/task/TID/children).
//
// Reading every process's stat on every sample costs about 5 µs per process
// on the machine, too much for a one-process target on a busy host, so the
// walker remembers the PIDs it found outside the tree. A process outside
// the tree can never become a descendant of the root: reparenting only
// moves orphans up to init or a subreaper among their ancestors. A PID that
// left the listing and came back is read again. What the cache can miss is
// a PID that exits and is reused between two samples, which needs the
// kernel's cyclic PID allocator to wrap around pid_max in one interval; a
// full rescan every fullRescanEvery samples, and on every change of root,
// bounds even that.
//
// Listing /proc itself costs about 50 µs with ~100 processes, a third of a
// one-process sample, so the walker skips it when no process was created
// since the last listing: the last field of /proc/loadavg is the last PID
// the kernel handed out (threads included) in soakd's PID namespace. When
// it has not moved, the tree is the previous one less the processes that
// died or were reparented away, and only those members' stat is read.
// This is used only when the procfs root is soakd's own (its "self" is
// soakd), so that the namespace of loadavg is the one listed.
type walker struct {
	fs       *procFS
	foreign  map[int32]struct{} // listed last time and known outside the tree
	listed   map[int32]struct{} // scratch: PIDs listed this time
	stats    map[int32]statInfo // scratch: stats read this time
	children map[int32][]int32  // scratch: ppid → pids
	lastRoot procID
	walks    int
	lastPID  []byte  // last field of loadavg at the last full listing
	prev     []int32 // the tree found last time
	ownProc  int8    // 1: the procfs root is soakd's; -1: it is not; 0: unknown
	// extra are processes outside the root's tree that are sampled with
	// it, each with its descendants (followed upstreams: see Follow); a
	// change of them clears the cache of foreign PIDs, as a new root does.
	extra     []procID
	extraSeen int // len(extra) at the last walk
}

func newWalker(fs *procFS) *walker {
	return &walker{
		fs:       fs,
		foreign:  make(map[int32]struct{}),
		listed:   make(map[int32]struct{}),
		stats:    make(map[int32]statInfo),
		children: make(map[int32][]int32),
	}
}

// errRootGone says the root process is no longer there (or its PID now
// belongs to another process).
var errRootGone = fmt.Errorf("root process is gone")

// tree returns the root (first) and all its live descendants.
func (w *walker) tree(root procID, out []proc) ([]proc, error) {
	if root != w.lastRoot || w.walks%fullRescanEvery == 0 || len(w.extra) != w.extraSeen {
		clear(w.foreign)
	}
	w.extraSeen = len(w.extra)
	w.lastRoot = root
	w.walks++
	if !w.unchanged() {
		if err := w.readAll(); err != nil {
			return out, err
		}
	} else {
		w.readPrevious()
	}
	rs, ok := w.stats[root.PID]
	if !ok || rs.StartTime != root.Start {
		return out, errRootGone
	}
	out = w.descend(root.PID, out)
	out = w.descendExtra(out)
	w.remember(out)
	return out, nil
}

// unchanged says whether no process has been created since the previous
// full listing, which may then be skipped. It records the last PID for the
// next call when a listing is due.
func (w *walker) unchanged() bool {
	if !w.isOwnProc() {
		return false
	}
	b, err := w.fs.read(w.fs.root + "/loadavg")
	if err != nil {
		w.lastPID = w.lastPID[:0]
		return false
	}
	b = bytes.TrimSpace(b)
	last := b[bytes.LastIndexByte(b, ' ')+1:]
	same := len(w.lastPID) > 0 && bytes.Equal(last, w.lastPID) && len(w.prev) > 0 && len(w.foreign) > 0
	w.lastPID = append(w.lastPID[:0], last...)
	return same
}

// isOwnProc says whether the procfs root's "self" is soakd.
func (w *walker) isOwnProc() bool {
	if w.ownProc == 0 {
		w.ownProc = -1
		if self, err := os.Readlink(w.fs.root + "/self"); err == nil && self == strconv.Itoa(os.Getpid()) {
			w.ownProc = 1
		}
	}
	return w.ownProc == 1
}

// readPrevious reads the stat of last time's tree members only.
func (w *walker) readPrevious() {
	clear(w.stats)
	for _, pid := range w.prev {
		b, err := w.fs.readPid(pid, "stat")
		if err != nil {
			continue
		}
		if s, err := parseStat(b); err == nil {
			w.stats[pid] = s
		}
	}
}

// readAll lists the procfs root and reads the stat of every PID not known
// to be outside the tree.
func (w *walker) readAll() error {
	clear(w.listed)
	clear(w.stats)
	err := w.fs.listPIDs(func(pid int32) {
		w.listed[pid] = struct{}{}
		if _, ok := w.foreign[pid]; ok {
			return
		}
		b, err := w.fs.readPid(pid, "stat")
		if err != nil {
			return // exited meanwhile
		}
		if s, err := parseStat(b); err == nil {
			w.stats[pid] = s
		}
	})
	if err != nil {
		return fmt.Errorf("list processes: %w", err)
	}
	for pid := range w.foreign {
		if _, ok := w.listed[pid]; !ok {
			delete(w.foreign, pid)
		}
	}
	return nil
}

// descend appends the root and its descendants, breadth first.
func (w *walker) descend(root int32, out []proc) []proc {
	for pid, ch := range w.children {
		w.children[pid] = ch[:0]
	}
	for pid, s := range w.stats {
		if pid != root {
			w.children[s.PPID] = append(w.children[s.PPID], pid)
		}
	}
	start := len(out)
	out = append(out, w.proc(root))
	for i := start; i < len(out); i++ {
		for _, c := range w.children[out[i].ID.PID] {
			out = append(out, w.proc(c))
		}
	}
	return out
}

// descendExtra appends each extra process that is alive (its start time
// unchanged) and not already in out, with its descendants.
func (w *walker) descendExtra(out []proc) []proc {
	for _, x := range w.extra {
		s, ok := w.stats[x.PID]
		if !ok || s.StartTime != x.Start || slices.ContainsFunc(out, func(p proc) bool { return p.ID.PID == x.PID }) {
			continue
		}
		start := len(out)
		out = append(out, w.proc(x.PID))
		for i := start; i < len(out); i++ {
			for _, c := range w.children[out[i].ID.PID] {
				out = append(out, w.proc(c))
			}
		}
	}
	return out
}

func (w *walker) proc(pid int32) proc {
	s := w.stats[pid]
	return proc{ID: procID{PID: pid, Start: s.StartTime}, Stat: s}
}

// remember marks every process read this time and not in the tree as
// foreign.
func (w *walker) remember(tree []proc) {
	w.prev = w.prev[:0]
	for _, p := range tree {
		delete(w.stats, p.ID.PID)
		w.prev = append(w.prev, p.ID.PID)
	}
	for pid := range w.stats {
		w.foreign[pid] = struct{}{}
	}
}
