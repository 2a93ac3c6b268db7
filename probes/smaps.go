package probes

import (
	"bytes"
	"time"
)

// Mapping classes: where a process's resident memory lives. A named file
// is its own class, by path.
const (
	MapHeap      = "[heap]"        // the brk heap: small mallocs
	MapAnon      = "anonymous"     // mmap'ed memory: large mallocs, arenas, runtimes' heaps
	MapStack     = "[stack]"       // the main thread's stack
	MapShared    = "shared memory" // SysV, POSIX shm, memfd, shared anonymous
	MapKernel    = "[vdso]"        // vdso, vvar, vsyscall: the kernel's
	arenaAlign   = 64 << 20        // glibc's HEAP_MAX_SIZE on 64-bit: arenas are aligned to it
	maxAnonTrack = 1 << 14         // anonymous mappings a snapshot keeps by address
)

// MapGroup is one class of mappings summed over the tree, in bytes.
type MapGroup struct {
	Name         string `json:"name"`
	RSS          uint64 `json:"rss_bytes"`
	Anonymous    uint64 `json:"anonymous_bytes"`
	PrivateDirty uint64 `json:"private_dirty_bytes"`
	Count        int    `json:"count"`
}

// AnonMapping is one anonymous mapping of the tree: a key for telling new
// mappings from old ones, and its sizes.
type AnonMapping struct {
	PID   int32  `json:"pid"`
	Start uint64 `json:"start"`
	Size  uint64 `json:"size_bytes"`
	RSS   uint64 `json:"rss_bytes"`
	// Arena is true for a mapping that starts on a 64 MiB boundary: the
	// shape of a glibc malloc arena (its reserved heap).
	Arena bool `json:"arena,omitempty"`
}

// MapSnapshot is the tree's memory grouped by mapping class at one time,
// read from every process's /proc/PID/smaps.
type MapSnapshot struct {
	Time     time.Time           `json:"time"`
	Procs    int                 `json:"procs"`
	Mappings int                 `json:"mappings"`
	Groups   map[string]MapGroup `json:"groups"`
	// Anon lists the anonymous mappings holding memory (at most
	// maxAnonTrack of them), to find the ones a soak added.
	Anon []AnonMapping `json:"anon,omitempty"`
	// PSS and USS are smaps_rollup's sums, from the same read.
	PSS uint64 `json:"pss_bytes"`
	USS uint64 `json:"uss_bytes"`
	// PSSAnon and USSDirty are Sample's: PSS in anonymous and shared
	// memory, and Private_Dirty. smaps has no Pss_Anon by mapping, so a
	// file mapping's share is its PSS times its anonymous (copied on
	// write) part of its RSS; an anonymous mapping's is its PSS.
	PSSAnon  uint64 `json:"pss_anon_bytes"`
	USSDirty uint64 `json:"uss_dirty_bytes"`
	// Cost is the wall time the read took.
	Cost time.Duration `json:"cost_ns"`
}

// mapping is one entry of /proc/PID/smaps, in bytes.
type mapping struct {
	start, size                   uint64
	shared                        bool // perms say "s"
	path                          string
	rss, pss, anon, dirty, pclean uint64
}

// classOf names the class of a mapping.
func classOf(m mapping) string {
	p, shared := m.path, m.shared
	switch {
	case p == "[heap]":
		return MapHeap
	case p == "[stack]" || hasPrefix(p, "[stack:"):
		return MapStack
	case p == "[vdso]" || p == "[vvar]" || p == "[vsyscall]" || p == "[vvar_vclock]" || p == "[uprobes]":
		return MapKernel
	case hasPrefix(p, "/SYSV") || hasPrefix(p, "/dev/shm/") || hasPrefix(p, "/memfd:") || hasPrefix(p, "[anon_shmem"):
		return MapShared
	case p == "" || hasPrefix(p, "[anon:"):
		if shared {
			return MapShared
		}
		return MapAnon
	case shared && hasSuffix(p, " (deleted)"):
		return MapShared
	}
	return p
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
func hasSuffix(s, p string) bool { return len(s) >= len(p) && s[len(s)-len(p):] == p }

// parseSmaps calls add for every mapping of a /proc/PID/smaps file. It
// returns the number of malformed lines it skipped. paths interns the
// mappings' paths (nil: no interning): a tree's processes map the same
// files, and a read of 50 processes would otherwise allocate a string per
// mapping.
func parseSmaps(b []byte, paths map[string]string, add func(mapping)) (bad int) {
	var cur mapping
	open := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) == 0 {
			continue
		}
		if key, val, ok := smapsField(line); ok {
			if open {
				cur.addField(key, val)
			}
			continue
		}
		m, ok := parseMapHeader(line, paths)
		if !ok {
			bad++
			continue
		}
		if open {
			add(cur)
		}
		cur, open = m, true
	}
	if open {
		add(cur)
	}
	return bad
}

// smapsField splits "Rss:   8 kB" into its key and its value in bytes;
// ok is false for a line that is not a field (a mapping's header). A
// field whose value is no number (VmFlags) reads 0.
func smapsField(line []byte) (key []byte, val uint64, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 || bytes.IndexByte(line[:i], ' ') >= 0 || bytes.IndexByte(line[:i], '-') >= 0 {
		return nil, 0, false
	}
	key, rest := line[:i], line[i+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		val = val*10 + uint64(rest[n]-'0')
		n++
	}
	if bytes.HasSuffix(rest[n:], []byte(" kB")) {
		val <<= 10
	}
	return key, val, true
}

func (m *mapping) addField(key []byte, v uint64) {
	switch string(key) {
	case "Rss":
		m.rss = v
	case "Pss":
		m.pss = v
	case "Anonymous":
		m.anon = v
	case "Private_Dirty":
		m.dirty = v
	case "Private_Clean":
		m.pclean = v
	}
}

// parseMapHeader reads "start-end perms offset dev inode [path]".
func parseMapHeader(line []byte, paths map[string]string) (mapping, bool) {
	var m mapping
	var f [6][]byte
	rest := line
	for i := range f {
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		if i == 5 { // the path is the rest of the line: it may hold spaces
			f[i] = bytes.TrimRight(rest, " ")
			break
		}
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		f[i], rest = rest[:end], rest[end:]
	}
	lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
	if !ok || len(f[1]) != 4 || len(f[4]) == 0 {
		return m, false
	}
	start, ok1 := parseHex(lo)
	end, ok2 := parseHex(hi)
	if !ok1 || !ok2 || end < start {
		return m, false
	}
	m.start, m.size, m.shared = start, end-start, f[1][3] == 's'
	m.path = intern(paths, f[5])
	return m, true
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// intern returns b as a string, the same one for the same bytes.
func intern(paths map[string]string, b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := paths[string(b)]; ok {
		return s
	}
	s := string(b)
	if paths != nil && len(paths) < 1<<14 {
		paths[s] = s
	}
	return s
}

// mapsBuilder sums a tree's mappings into a MapSnapshot.
type mapsBuilder struct {
	snap MapSnapshot
	pid  int32
}

func newMapsBuilder(now time.Time) *mapsBuilder {
	return &mapsBuilder{snap: MapSnapshot{Time: now, Groups: map[string]MapGroup{}}}
}

func (mb *mapsBuilder) add(m mapping) {
	s := &mb.snap
	s.Mappings++
	s.PSS += m.pss
	s.USS += m.dirty + m.pclean
	s.USSDirty += m.dirty
	name := classOf(m)
	switch {
	case name == MapShared || m.anon >= m.rss:
		s.PSSAnon += m.pss
	case m.anon > 0:
		s.PSSAnon += uint64(float64(m.pss) * float64(m.anon) / float64(m.rss))
	}
	g := s.Groups[name]
	g.Name = name
	g.RSS += m.rss
	g.Anonymous += m.anon
	g.PrivateDirty += m.dirty
	g.Count++
	s.Groups[name] = g
	if name == MapAnon && m.rss > 0 && len(s.Anon) < maxAnonTrack {
		s.Anon = append(s.Anon, AnonMapping{PID: mb.pid, Start: m.start, Size: m.size, RSS: m.rss, Arena: m.start%arenaAlign == 0 && m.size <= arenaAlign})
	}
}

// readMaps reads the smaps of every process in procs into a snapshot.
// Processes whose smaps cannot be read are left out; ok is false when
// none could be read.
func (s *Sampler) readMaps(now time.Time, procs []proc) (snap MapSnapshot, ok bool) {
	t0 := time.Now()
	mb := newMapsBuilder(now)
	for _, p := range procs {
		if p.Stat.State == 'Z' {
			continue
		}
		b, err := s.fs.readSlow(s.fs.pidPath(p.ID.PID, "smaps"))
		if err != nil {
			if isDenied(err) {
				s.warnOnce("smaps-full", "probes: cannot read the target's /proc/PID/smaps: the growing mappings are not reported; run soakd as the target's user or grant it CAP_SYS_PTRACE", p, err)
			}
			continue
		}
		mb.pid = p.ID.PID
		if s.paths == nil {
			s.paths = map[string]string{}
		}
		parseSmaps(b, s.paths, mb.add)
		mb.snap.Procs++
	}
	mb.snap.Cost = time.Since(t0)
	return mb.snap, mb.snap.Procs > 0
}

// MapsNow reads the whole tree's mappings now (the soak's start and end);
// ok is false when the target is gone or no smaps was readable. It also
// becomes the latest paced snapshot.
func (s *Sampler) MapsNow() (MapSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	st := s.t.current(now)
	if !st.Alive {
		return MapSnapshot{}, false
	}
	procs, err := s.members(st)
	if err != nil || len(procs) == 0 {
		return MapSnapshot{}, false
	}
	snap, ok := s.readMaps(now, procs)
	if ok {
		s.keepMaps(snap)
	}
	return snap, ok
}

// TakeMaps returns the snapshots read since the last call (the paced ones
// on the smaps cadence with SamplerOptions.Mappings, and MapsNow's), and
// forgets them.
func (s *Sampler) TakeMaps() []MapSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.maps
	s.maps = nil
	return out
}

// sampleMapsPaced reads the full smaps on the smaps cadence instead of
// smaps_rollup: the same walk of every mapping, grouped, from which PSS
// and USS come too.
func (s *Sampler) sampleMapsPaced(out *Sample, procs []proc) {
	snap, ok := s.readMaps(out.Time, procs)
	if !ok {
		s.sampleSmaps(out, procs)
		return
	}
	out.PSS, out.USS, out.SmapsValid = snap.PSS, snap.USS, true
	out.PSSAnon, out.USSDirty, out.PSSAnonValid, out.USSDirtyValid = snap.PSSAnon, snap.USSDirty, true, true
	s.keepMaps(snap)
}

// maxKeptMaps bounds the snapshots kept between two TakeMaps: the oldest
// but the first are dropped.
const maxKeptMaps = 64

func (s *Sampler) keepMaps(snap MapSnapshot) {
	if len(s.maps) >= maxKeptMaps {
		s.maps = append(s.maps[:1], s.maps[2:]...)
	}
	s.maps = append(s.maps, snap)
}

// Root returns the root's PID and command name (comm) now; ok is false
// when the target is gone.
func (s *Sampler) Root() (pid int32, comm string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.t.current(s.now())
	if !st.Alive {
		return 0, "", false
	}
	b, err := s.fs.readPid(st.ID.PID, "comm")
	if err != nil {
		return st.ID.PID, "", true
	}
	return st.ID.PID, string(bytes.TrimSpace(b)), true
}
