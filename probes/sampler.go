package probes

import (
	"cmp"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// clockTicks is USER_HZ, the unit of stat's utime and stime: 100 on every
// Linux architecture soakd runs on (it is an ABI constant, unlike HZ), and
// the value gopsutil assumes too.
const clockTicks = 100

// SamplerOptions tunes a Sampler.
type SamplerOptions struct {
	// SmapsInterval is the PSS/USS cadence (default 30s; <0 disables).
	// Reading smaps_rollup takes the target's mmap lock, so it is rare.
	SmapsInterval time.Duration
	// TopN is the per-process breakdown size (default 5).
	TopN int
	// SocketInterval is the TCP census cadence (default 5s; <0 disables).
	// A census costs a readlink per fd of the tree and one walk of the
	// kernel's TCP hash table (about 0.3 ms of CPU here), so it is not
	// taken on every sample.
	SocketInterval time.Duration
	// ThreadInterval is the cadence of the pass over every thread of the
	// tree (default 1s; <0 disables): the other threads' context switches
	// and every thread's schedstat. It costs a read or two per thread
	// (about 0.14 ms for a process of a dozen threads, 6 ms for a tree of
	// 50 processes).
	ThreadInterval time.Duration
	// Mappings reads the full /proc/PID/smaps instead of smaps_rollup on
	// the SmapsInterval cadence, grouping the memory by mapping class (see
	// MapSnapshot and TakeMaps). It walks the same mappings the rollup
	// does, and costs more to format: see BenchmarkMapsTree50.
	Mappings bool
	// LoadConns counts, in each member, its TCP connections to soakd's
	// own process (Member.LoadConns): the load's connections, which the
	// lives rule nets out of each process's fds. It lists every member's
	// fds with a readlink each, and reads the TCP sockets through
	// sock_diag, on every sample (see BenchmarkSampleTree50LoadConns).
	LoadConns bool
	// LoadEnds, with LoadConns, lists the load's connections open now:
	// fn gets each one's local address (soakd's end) and remote address
	// (the server's end). The count then looks up each connection's server
	// end by its addresses, instead of reading soakd's own fds and every
	// TCP socket of the machine (see BenchmarkLoadConnsCount), and counts
	// the load's connections only: another connection of soakd's process
	// to the target counts as the target's. It returns false when it
	// cannot list them; that sample is then counted the way without it.
	// It is called from the sampling goroutine.
	LoadEnds func(fn func(local, remote netip.AddrPort)) bool
	// Log receives the one-time warnings (permission denied and the like).
	Log *zap.Logger
}

// Sampler reads the target's whole process tree on demand. Sample is safe
// for concurrent use; calls run one at a time.
type Sampler struct {
	t        *Target
	opts     SamplerOptions
	log      *zap.Logger
	pageSize uint64

	mu         sync.Mutex // guards all below
	fs         *procFS
	self       *procFS
	walk       *walker
	procAcc    *accumulator // CPU and I/O, per process identity
	threadAcc  *accumulator // context switches, per thread
	waitAcc    *accumulator // run-queue wait, per thread (every thread pass)
	waitRead   bool         // this sample read some thread's schedstat
	tcp        *tcpCounter
	procs      []proc
	mems       []Member          // this sample's, before sorting and capping
	names      map[procID]string // comm of each member of this sample
	lastNames  map[procID]string // the previous sample's, to share strings
	smaps      cadence
	census     cadence
	threads    cadence // other threads' context switches
	allThreads bool    // this sample reads every thread's status
	blindFDs   bool    // this census could not list some fd dir
	last       Sample  // the previous sample, for carried values
	netlink    bool    // the census may use sock_diag (see netlink.go)
	diagBuf    []byte
	// treeListeners are the listening sockets (by inode) the sampled
	// processes owned at the last look for upstreams that read their fds.
	treeListeners map[uint64]bool
	warned        map[string]bool
	fdLimit       uint64
	limitOf       procID
	pass          *cpuPass          // the busiest thread and process of a thread pass
	allowed       int               // the root's affinity CPUs, from this sample's status
	capacity      capacity          // the root's CPU capacity, read on the smaps cadence
	maps          []MapSnapshot     // read since the last TakeMaps (Mappings)
	paths         map[string]string // the mappings' paths, interned
	now           func() time.Time
	statPath      string                   // the procfs root's stat file
	upOwners      map[uint64]upstreamOwner // listening socket inode → owner (Upstreams)
	peers         *loadPeers               // nil unless SamplerOptions.LoadConns
}

// NewSampler returns a Sampler of t.
func NewSampler(t *Target, opts SamplerOptions) *Sampler {
	if opts.SmapsInterval == 0 {
		opts.SmapsInterval = 30 * time.Second
	}
	if opts.TopN <= 0 {
		opts.TopN = 5
	}
	if opts.SocketInterval == 0 {
		opts.SocketInterval = 5 * time.Second
	}
	if opts.ThreadInterval == 0 {
		opts.ThreadInterval = threadInterval
	}
	if opts.Log == nil {
		opts.Log = t.log
	}
	fs := newProcFS(t.spec.ProcRoot)
	var peers *loadPeers
	if opts.LoadConns {
		peers = newLoadPeers()
	}
	return &Sampler{
		t: t, opts: opts, log: opts.Log, pageSize: uint64(os.Getpagesize()),
		fs: fs, self: newProcFS("/proc"), walk: newWalker(fs),
		procAcc: newAccumulator(), threadAcc: newAccumulator(), waitAcc: newAccumulator(), tcp: newTCPCounter(),
		names: map[procID]string{}, lastNames: map[procID]string{},
		warned: map[string]bool{}, netlink: t.spec.ProcRoot == "/proc",
		smaps: cadence{every: opts.SmapsInterval}, census: cadence{every: opts.SocketInterval},
		threads: cadence{every: opts.ThreadInterval},
		pass:    newCPUPass(), now: time.Now,
		upOwners: map[uint64]upstreamOwner{}, peers: peers,
	}
}

// SetSmapsInterval changes the PSS/USS cadence to d (d > 0) from the next
// sample on; a Sampler that never reads smaps_rollup stays so.
func (s *Sampler) SetSmapsInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d > 0 && s.smaps.every > 0 {
		s.smaps.every = d
	}
}

// Sample takes one sample now. It never fails the run: a gone target gives
// Alive=false (and the Target records ExitInfo), a process that vanishes
// mid-read is left out, and unreadable files clear the matching Valid flag.
// The cumulative totals are filled in every sample, alive or not. A panic
// is a bug in soakd and is not recovered: it must be seen.
func (s *Sampler) Sample() (out Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out.Time = s.now()
	st := s.t.current(out.Time)
	out.RootPID, out.RootStart, out.Incarnation = st.ID.PID, st.ID.Start, st.Incarnation
	s.sampleSelf(&out)
	if st.Alive {
		s.sampleTree(&out, st)
	}
	s.procAcc.sweep()
	if s.allThreads || !out.Alive {
		s.threadAcc.sweep()
		s.waitAcc.sweep()
	}
	s.fillTotals(&out)
	s.last = out
	return out
}

// sampleSelf reads soakd's own CPU and RSS.
func (s *Sampler) sampleSelf(out *Sample) {
	b, err := s.self.read("/proc/self/stat")
	if err != nil {
		return
	}
	st, err := parseStat(b)
	if err != nil {
		return
	}
	out.SelfUser = float64(st.UTime) / clockTicks
	out.SelfSystem = float64(st.STime) / clockTicks
	out.SelfRSS = st.RSSPages * s.pageSize
}

// sampleHost reads the machine's CPU time from /proc/stat. The kernel
// writes a line per interrupt into that file, so on a large machine it is
// costly and is read with the thread pass only.
func (s *Sampler) sampleHost(out *Sample) {
	if s.statPath == "" {
		s.statPath = s.fs.root + "/stat"
	}
	b, err := s.fs.read(s.statPath)
	if err != nil {
		return
	}
	h, err := parseProcStat(b)
	if err != nil {
		return
	}
	out.HostCPUValid = true
	out.HostCPUBusy, out.HostCPUTotal = float64(h.Busy)/clockTicks, float64(h.Total)/clockTicks
	out.HostCPUs = h.CPUs
}

// sampleTree reads every process of the tree, then the tree-wide tables.
func (s *Sampler) sampleTree(out *Sample, st rootState) {
	procs, err := s.members(st)
	if err != nil || len(procs) == 0 {
		return // the root went away between resolving and walking
	}
	out.Alive, out.Procs = true, len(procs)
	if s.peers != nil && len(procs) > 1 {
		s.peers.on = true
	}
	out.FDsValid, out.IOValid = true, true
	out.RSSValid, out.ThreadsValid = true, true
	census := s.census.due(out.Time, st.ID)
	s.blindFDs = false
	s.allThreads = s.threads.due(out.Time, st.ID)
	s.tcp.reset()
	s.mems = s.mems[:0]
	if s.allThreads {
		s.pass.start(out.Time, st.ID)
	}
	for _, p := range procs {
		s.mems = append(s.mems, s.sampleProc(p, census, out))
	}
	if s.allThreads {
		s.sampleHost(out)
		s.pass.finish(s, out)
	}
	if s.countingLoad() {
		s.countLoadConns(st.ID.PID)
	}
	if census {
		s.sampleTCP(out, st.ID.PID)
	} else {
		s.carryTCP(out)
	}
	out.FDLimit = s.rootFDLimit(st.ID)
	if s.smaps.due(out.Time, st.ID) {
		s.fdLimit = 0 // re-read the limits on the same cadence
		s.capacity = capacityOf(s.fs, s.t.spec.CgroupRoot, st.ID.PID, s.allowed)
		if s.opts.Mappings {
			s.sampleMapsPaced(out, procs)
		} else {
			s.sampleSmaps(out, procs)
		}
	} else {
		s.carrySmaps(out)
	}
	s.sampleCgroup(out)
	out.CPUCapacity, out.CPUCapacitySource = s.capacity.Cores, s.capacity.Source
	out.Members, out.Top = s.memberList()
}

// members lists the processes to sample, the root first.
func (s *Sampler) members(st rootState) ([]proc, error) {
	if !s.t.kind.cgroup {
		var err error
		s.procs, err = s.walk.tree(st.ID, s.procs[:0])
		return s.procs, err
	}
	s.procs = s.procs[:0]
	for _, p := range st.Members { // their stat was read when the root was located
		if p.ID == st.ID {
			s.procs = append([]proc{p}, s.procs...)
		} else {
			s.procs = append(s.procs, p)
		}
	}
	s.procs = s.followedProcs(s.procs)
	return s.procs, nil
}

// sampleProc reads one process and adds it to the sample's sums.
func (s *Sampler) sampleProc(p proc, census bool, out *Sample) Member {
	rss := p.Stat.RSSPages * s.pageSize
	out.RSS += rss
	out.VMS += p.Stat.VSize
	out.Threads += p.Stat.NumThreads
	ps := Member{PID: p.ID.PID, Start: p.ID.Start, PPID: p.Stat.PPID, Name: s.name(p),
		RSS: rss, Threads: p.Stat.NumThreads, NoFDs: true,
		CPU: float64(p.Stat.UTime+p.Stat.STime) / clockTicks}
	if p.Stat.State == 'Z' {
		return ps // exited, not reaped: nothing more to read
	}
	if isStopped(p.Stat.State) {
		out.Stopped++
		out.RootStopped = out.RootStopped || p.ID.PID == out.RootPID
	}
	c := counters{UTime: p.Stat.UTime, STime: p.Stat.STime}
	s.readIO(p, &c, out)
	s.procAcc.observe(p.ID, c)
	if b, err := s.fs.readPid(p.ID.PID, "status"); err == nil {
		if status, err := parseStatus(b); err == nil {
			out.Swap += status.SwapBytes
			if p.ID.PID == out.RootPID {
				s.allowed = status.CPUsAllowed
			}
			s.threadCounters(p, status)
		}
	}
	fds, scanned, err := s.countFDs(p.ID.PID, census)
	switch {
	case err == nil:
		ps.FDs, ps.NoFDs, ps.LoadConnsValid = fds, false, scanned
		out.FDs += fds
	case isDenied(err):
		out.FDsValid = false
		s.warnOnce("fd", "probes: cannot read the target's open files (/proc/PID/fd): fd and TCP counts are missing; run soakd as the target's user or grant it CAP_SYS_PTRACE", p, err)
	}
	return ps
}

// countFDs counts pid's fds; on a census sample, or on every sample when
// the load's connections are counted, it also collects the socket inodes
// (scanned), which takes a readlink per fd. A scan that cannot list the
// fd dir falls back to the count alone (stat of the dir may still work)
// and the census is marked blind.
func (s *Sampler) countFDs(pid int32, census bool) (n uint64, scanned bool, err error) {
	if census || s.countingLoad() {
		if s.countingLoad() {
			n, err = s.scanFDs(pid, len(s.mems), census)
		} else {
			n, err = s.fs.fdScan(pid, s.tcp.owned)
		}
		if err == nil || !isDenied(err) {
			return n, err == nil && s.countingLoad(), err
		}
		s.blindFDs = s.blindFDs || census
	}
	n, err = s.fs.fdCount(pid)
	return n, false, err
}

// readIO fills c's I/O counters from /proc/PID/io; when it is not readable
// the previous values are kept, so the totals neither drop nor jump.
func (s *Sampler) readIO(p proc, c *counters, out *Sample) {
	b, err := s.fs.readPid(p.ID.PID, "io")
	if err == nil {
		var io ioInfo
		if io, err = parseIO(b); err == nil {
			c.RChar, c.WChar, c.ReadBytes, c.WriteBytes = io.RChar, io.WChar, io.ReadBytes, io.WriteBytes
			return
		}
	}
	if prev, ok := s.procAcc.lastOf(p.ID); ok {
		c.RChar, c.WChar, c.ReadBytes, c.WriteBytes = prev.RChar, prev.WChar, prev.ReadBytes, prev.WriteBytes
	}
	if isDenied(err) {
		out.IOValid = false
		s.warnOnce("io", "probes: cannot read the target's I/O counters (/proc/PID/io): I/O bytes are missing; run soakd as the target's user or grant it CAP_SYS_PTRACE", p, err)
	}
}

// threadInterval is the default of SamplerOptions.ThreadInterval: how
// often the context switches of threads other than the main one, and every
// thread's schedstat, are read. Once a second: a fast run of 8 s must get
// enough passes for the busiest-thread rule of the CPU verdict, and at
// that rate even a 50-process tree costs 0.6 % of a core.
const threadInterval = time.Second

// threadCounters adds the context switches of p's threads and, every
// threadInterval, the time they spent runnable but waiting for a CPU.
//
// /proc/PID/status counts the main thread only, so a multi-threaded
// process's other threads are read from /proc/PID/task/TID/status: a read
// per thread, which for a tree of Go processes was two thirds of a
// sample's cost, so it is done every threadInterval only. Each thread is
// its own identity in the accumulator, so the totals stay monotonic and
// exact at those samples and lag by the other threads' last few seconds in
// between.
//
// The same pass reads /proc/PID/task/TID/schedstat: its first field, the
// time on a CPU, finds the busiest thread (a saturated event loop among
// idle helpers), and its second, the run-queue wait, tells a server that
// waits for a CPU (CPU-bound on a busy machine) from one that waits on
// I/O. Without schedstat the thread's stat gives its CPU time in ticks.
func (s *Sampler) threadCounters(p proc, leader statusInfo) {
	s.threadAcc.observe(p.ID, counters{CtxVol: leader.CtxVol, CtxInvol: leader.CtxInvol})
	if !s.allThreads {
		return
	}
	s.pass.noteProc(p)
	_ = s.fs.eachTask(p.ID.PID, func(tid int32) {
		id := procID{PID: tid, Start: p.ID.Start}
		if tid != p.ID.PID {
			if b, err := s.fs.readTask(p.ID.PID, tid, "status"); err == nil {
				if ts, err := parseStatus(b); err == nil {
					s.threadAcc.observe(id, counters{CtxVol: ts.CtxVol, CtxInvol: ts.CtxInvol})
				}
			}
		}
		s.taskCPU(p, id, tid)
	})
}

// taskCPU reads one thread's on-CPU and run-queue times and notes them in
// the pass.
func (s *Sampler) taskCPU(p proc, id procID, tid int32) {
	var cur counters
	if b, err := s.fs.readTask(p.ID.PID, tid, "schedstat"); err == nil {
		run, wait, ok := parseSchedstat(b)
		if !ok {
			return
		}
		cur.OnCPU, cur.RunWait = run, wait
		s.waitRead = true
	} else if b, err := s.fs.readTask(p.ID.PID, tid, "stat"); err == nil {
		st, err := parseStat(b)
		if err != nil {
			return
		}
		cur.OnCPU = (st.UTime + st.STime) * (1e9 / clockTicks)
	} else {
		return
	}
	prev, seen := s.waitAcc.lastOf(id)
	s.waitAcc.observe(id, cur)
	if seen && cur.OnCPU >= prev.OnCPU && cur.RunWait >= prev.RunWait {
		s.pass.noteThread(p, tid, cur.OnCPU-prev.OnCPU, cur.RunWait-prev.RunWait)
	}
}

// warnOnce logs one warning per kind of trouble for the Sampler's life.
func (s *Sampler) warnOnce(kind, msg string, p proc, err error) {
	if s.warned[kind] {
		return
	}
	s.warned[kind] = true
	s.log.Warn(msg, zap.Int32("pid", p.ID.PID), zap.String("comm", p.Stat.Comm), zap.Error(err))
}

// sampleTCP counts the tree's sockets in the root's network namespace.
func (s *Sampler) sampleTCP(out *Sample, root int32) {
	if s.blindFDs {
		s.carryTCP(out) // without every fd, the owned sockets are unknown
		s.warnOnce("census", "probes: cannot list the target's open files (/proc/PID/fd): TCP socket counts are missing; run soakd as the target's user or grant it CAP_SYS_PTRACE", proc{ID: procID{PID: root}}, nil)
		return
	}
	if !s.sameNetNS(root) || !s.diagCensus() {
		s.fileCensus(root)
	}
	c := s.tcp.result()
	out.TCPValid = true
	out.TCPEstablished, out.TCPCloseWait, out.TCPTimeWait, out.TCPListen = c.Established, c.CloseWait, c.TimeWait, c.Listen
}

// carryTCP repeats the last census in a sample that takes none.
func (s *Sampler) carryTCP(out *Sample) {
	l := s.last
	out.TCPEstablished, out.TCPCloseWait, out.TCPTimeWait, out.TCPListen = l.TCPEstablished, l.TCPCloseWait, l.TCPTimeWait, l.TCPListen
}

// sameNetNS says whether root shares soakd's network namespace.
func (s *Sampler) sameNetNS(root int32) bool {
	if !s.netlink {
		return false
	}
	self, err1 := s.fs.nsInode("self")
	their, err2 := s.fs.nsInode(strconv.Itoa(int(root)))
	return err1 == nil && err2 == nil && self == their
}

// diagCensus counts sockets through sock_diag; on failure it turns itself
// off for good and the census reads /proc files.
func (s *Sampler) diagCensus() bool {
	if s.diagBuf == nil {
		s.diagBuf = make([]byte, 64<<10)
	}
	s.tcp.resetTables()
	if err := diagDump(s.diagBuf, s.tcp.add); err != nil {
		s.netlink = false
		s.tcp.resetTables()
		s.log.Info("probes: sock_diag unavailable; counting TCP sockets from /proc/PID/net/tcp{,6}, which costs more CPU", zap.Error(err))
		return false
	}
	return true
}

// fileCensus counts sockets from the root's /proc/PID/net/tcp{,6}.
func (s *Sampler) fileCensus(root int32) {
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := s.fs.readSlow(s.fs.pidPath(root, name)) // a line per socket: long on a busy host
		if err != nil {
			continue
		}
		if bad, err := parseNetTCP(b, s.tcp.add); bad > 0 {
			s.log.Debug("probes: skipped malformed socket rows", zap.String("table", name), zap.Int("rows", bad), zap.Error(err))
		}
	}
}

// rootFDLimit returns the root's soft RLIMIT_NOFILE, read once per root
// identity and again every smaps round (prlimit can change it).
func (s *Sampler) rootFDLimit(root procID) uint64 {
	if root == s.limitOf && s.fdLimit != 0 {
		return s.fdLimit
	}
	b, err := s.fs.readPid(root.PID, "limits")
	if err != nil {
		return 0
	}
	if n, err := parseNoFile(b); err == nil {
		s.fdLimit, s.limitOf = n, root
	}
	return s.fdLimit
}

// carrySmaps repeats the last PSS and USS in a sample that reads none.
func (s *Sampler) carrySmaps(out *Sample) {
	out.PSS, out.USS = s.last.PSS, s.last.USS
	out.PSSAnon, out.USSDirty = s.last.PSSAnon, s.last.USSDirty
}

// sampleSmaps sums PSS and USS over the tree.
func (s *Sampler) sampleSmaps(out *Sample, procs []proc) {
	for i, p := range procs {
		b, err := s.fs.readSlow(s.fs.pidPath(p.ID.PID, "smaps_rollup"))
		if err != nil {
			if i == 0 && isDenied(err) {
				s.warnOnce("smaps", "probes: cannot read the target's smaps_rollup: PSS and USS are missing; run soakd as the target's user or grant it CAP_SYS_PTRACE", p, err)
			}
			continue
		}
		m, err := parseSmapsRollup(b)
		if err != nil {
			continue
		}
		out.PSS += m.PSS
		out.USS += m.USS
		out.PSSAnon += m.PSSAnon
		out.USSDirty += m.USSDirty
		if !out.SmapsValid && i == 0 {
			out.SmapsValid, out.USSDirtyValid, out.PSSAnonValid = true, true, m.Split
		}
		out.PSSAnonValid = out.PSSAnonValid && m.Split
	}
}

// sampleCgroup reads the unit's cgroup memory.
func (s *Sampler) sampleCgroup(out *Sample) {
	if !s.t.kind.cgroup {
		return
	}
	m, err := readCgroupMem(s.fs, s.t.cgroup)
	if err != nil {
		if !s.warned["cgroup"] {
			s.warned["cgroup"] = true
			s.log.Warn("probes: cannot read the unit's cgroup memory files; is the memory controller enabled for it?", zap.String("cgroup", s.t.cgroup), zap.Error(err))
		}
		return
	}
	out.CgroupValid = true
	out.MemCurrent, out.MemMax, out.MemAnon, out.MemFile = m.Current, m.Max, m.Anon, m.File
}

// name returns p's comm, as the same string as in the previous sample when
// it has not changed: the records of a long run keep every sample's
// members, and would otherwise hold a copy of each name per sample.
func (s *Sampler) name(p proc) string {
	n, ok := s.lastNames[p.ID]
	if !ok || n != p.Stat.Comm {
		n = p.Stat.Comm
	}
	s.names[p.ID] = n
	return n
}

// memberList returns this sample's members, largest RSS first and at most
// MaxMembers, and the TopN of them as ProcStats. Both are new slices: the
// sample outlives the call.
func (s *Sampler) memberList() ([]Member, []ProcStat) {
	s.lastNames, s.names = s.names, s.lastNames
	clear(s.names)
	slices.SortFunc(s.mems, func(a, b Member) int { return cmp.Or(cmp.Compare(b.RSS, a.RSS), cmp.Compare(a.PID, b.PID)) })
	members := slices.Clone(s.mems[:min(len(s.mems), MaxMembers)])
	top := make([]ProcStat, min(len(members), s.opts.TopN))
	for i := range top {
		top[i] = members[i].Stat()
	}
	return members, top
}

// fillTotals copies the monotonic totals into the sample.
func (s *Sampler) fillTotals(out *Sample) {
	p, th := s.procAcc.total, s.threadAcc.total
	out.CPUUser = float64(p.UTime) / clockTicks
	out.CPUSystem = float64(p.STime) / clockTicks
	out.CtxVoluntary, out.CtxInvol = th.CtxVol, th.CtxInvol
	out.ReadBytes, out.WriteBytes = p.ReadBytes, p.WriteBytes
	out.ReadChars, out.WriteChars = p.RChar, p.WChar
	out.RunqueueWait = float64(s.waitAcc.total.RunWait) / 1e9
	out.RunqueueValid = out.Alive && s.allThreads && s.waitRead
	s.waitRead = false
}

// cadenceSlack is how early a reading may come: 10 % of its period, at
// most 200 ms.
func cadenceSlack(every time.Duration) time.Duration { return min(every/10, 200*time.Millisecond) }

// cadence says when a costly reading is due: at the first sample of each
// root identity, then every `every`; never when every < 0.
type cadence struct {
	every time.Duration
	last  time.Time
	root  procID
}

func (c *cadence) due(now time.Time, root procID) bool {
	// A reading is due a little early rather than a whole sample late: the
	// samples that ask come every interval with some jitter, and without
	// the slack a 2 s cadence on 1 s samples slips to every 3 s.
	if c.every < 0 || (root == c.root && now.Sub(c.last) < c.every-cadenceSlack(c.every)) {
		return false
	}
	c.last, c.root = now, root
	return true
}
