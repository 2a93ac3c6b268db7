package probes

import "time"

// Sample is one observation of the target's whole process tree, summed over
// every live process in it, plus soakd's own CPU and memory. Counters that
// are cumulative (CPU seconds, context switches, I/O bytes) are kept
// monotonic across workers that exit: a process's last counted value stays
// in the total after it is gone.
type Sample struct {
	Time time.Time `json:"time"`

	// Identity of the root process. Incarnation starts at 1 and increases
	// each time the root's {PID, start time} changes (a restart).
	Alive       bool   `json:"alive"`
	RootPID     int32  `json:"root_pid"`
	RootStart   uint64 `json:"root_start_ticks"`
	Incarnation int    `json:"incarnation"`
	Procs       int    `json:"procs"`
	// Stopped counts the tree's processes in state T (stopped: SIGSTOP,
	// SIGTSTP) or t (stopped by a tracer) at this sample; RootStopped says
	// the root is one of them. A stopped process is alive, but it answers
	// nothing until it is continued (SIGCONT).
	Stopped     int  `json:"stopped,omitempty"`
	RootStopped bool `json:"root_stopped,omitempty"`

	// Memory, in bytes.
	RSS  uint64 `json:"rss_bytes"`
	VMS  uint64 `json:"vms_bytes"`
	Swap uint64 `json:"swap_bytes"`
	// PSS and USS come from smaps_rollup, read less often; SmapsValid says
	// whether this sample holds a fresh reading (otherwise the last one is
	// repeated).
	SmapsValid bool   `json:"smaps_valid"`
	PSS        uint64 `json:"pss_bytes"`
	USS        uint64 `json:"uss_bytes"`
	// PSSAnon is the part of PSS in anonymous and shared memory (Pss_Anon
	// + Pss_Shmem), and USSDirty the dirty part of USS (Private_Dirty),
	// from the same smaps_rollup reads. They leave out clean file pages
	// (the program's and its libraries' text), whose shares move whenever
	// another process that maps the same files starts or exits, outside
	// the target's tree: a clean Go target's PSS rose by 3.8 MiB and its USS
	// by 4.9 MiB when three other instances of its binary exited, and its
	// Pss_Anon did not move. (A file written moments ago, such as a binary
	// just built, has dirty pages until they are written back, some 30 s:
	// Private_Dirty moves with its shares until then; Pss_Anon does not.)
	// PSSAnonValid is false on kernels whose smaps_rollup has no Pss_Anon;
	// USSDirtyValid goes with SmapsValid, except in samples stored before
	// these fields existed.
	PSSAnon       uint64 `json:"pss_anon_bytes,omitempty"`
	PSSAnonValid  bool   `json:"pss_anon_valid,omitempty"`
	USSDirty      uint64 `json:"uss_dirty_bytes,omitempty"`
	USSDirtyValid bool   `json:"uss_dirty_valid,omitempty"`

	// Files and threads. FDsValid is false when /proc/PID/fd was not
	// readable for the root or any other process of the tree. FDLimit is
	// the root's soft RLIMIT_NOFILE (0 if unlimited or unreadable).
	FDsValid bool   `json:"fds_valid"`
	FDs      uint64 `json:"fds"`
	FDLimit  uint64 `json:"fd_limit"`
	Threads  uint64 `json:"threads"`

	// CPU, cumulative seconds; context switches, cumulative counts.
	CPUUser      float64 `json:"cpu_user_seconds"`
	CPUSystem    float64 `json:"cpu_system_seconds"`
	CtxVoluntary uint64  `json:"ctx_voluntary"`
	CtxInvol     uint64  `json:"ctx_involuntary"`
	// RunqueueWait is the cumulative time the tree's threads were runnable
	// but waiting for a CPU (schedstat), in seconds. It is read with the
	// threads' counters every few seconds; RunqueueValid says whether this
	// sample holds a fresh reading.
	RunqueueWait  float64 `json:"runqueue_wait_seconds"`
	RunqueueValid bool    `json:"runqueue_valid"`

	// The fields from here to SelfUser came after the first release; they
	// are omitted from the JSON when zero, which keeps stored samples small
	// between thread passes.
	//
	// The busiest thread and process since the previous thread pass (every
	// SamplerOptions.ThreadInterval); HotValid says whether this sample
	// holds a fresh reading. The thread is the one runnable longest: on a
	// CPU for HotThreadCPU of the interval and waiting for one for
	// HotThreadWait (shares of one core). A thread near 1 is a saturated
	// event loop, however many idle threads the process has. HotProcCores
	// is the busiest process's user+system time, in cores.
	HotValid      bool    `json:"hot_valid,omitempty"`
	HotThreadPID  int32   `json:"hot_thread_pid,omitempty"`
	HotThreadTID  int32   `json:"hot_thread_tid,omitempty"`
	HotThreadName string  `json:"hot_thread_name,omitempty"` // the thread's comm
	HotThreadCPU  float64 `json:"hot_thread_cpu,omitempty"`
	HotThreadWait float64 `json:"hot_thread_wait,omitempty"`
	HotProcPID    int32   `json:"hot_proc_pid,omitempty"`
	HotProcName   string  `json:"hot_proc_name,omitempty"`
	HotProcCores  float64 `json:"hot_proc_cores,omitempty"`

	// CPUCapacity is the cores the root may use: the least of its affinity
	// mask, its cpuset (cgroup v2 cpuset.cpus.effective, v1
	// cpuset.effective_cpus) and the CPU quota of its cgroup or an ancestor
	// (v2 cpu.max, v1 cpu.cfs_quota_us); 0 when none was readable.
	// CPUCapacitySource names the deciding limit first, then the others.
	// Both are read with PSS and USS (SmapsInterval, and at the first
	// sample of each root) and repeated in between.
	CPUCapacity       float64 `json:"cpu_capacity_cores,omitempty"`
	CPUCapacitySource string  `json:"cpu_capacity_source,omitempty"`

	// The whole machine's CPU time from /proc/stat, cumulative seconds
	// summed over its HostCPUs CPUs: busy (user, nice, system, irq,
	// softirq, steal) and total (busy, idle, iowait). It is read with the
	// thread pass; HostCPUValid says whether this sample holds a reading.
	HostCPUValid bool    `json:"host_cpu_valid,omitempty"`
	HostCPUBusy  float64 `json:"host_cpu_busy_seconds,omitempty"`
	HostCPUTotal float64 `json:"host_cpu_total_seconds,omitempty"`
	HostCPUs     int     `json:"host_cpus,omitempty"`

	// I/O bytes, cumulative; IOValid is false when /proc/PID/io was denied.
	// ReadBytes and WriteBytes reached the storage layer (read_bytes,
	// write_bytes); ReadChars and WriteChars went through read/write-like
	// calls, sockets included (rchar, wchar).
	IOValid    bool   `json:"io_valid"`
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
	ReadChars  uint64 `json:"read_chars"`
	WriteChars uint64 `json:"write_chars"`

	// TCP sockets owned by the tree, by state, from a census taken every
	// SamplerOptions.SocketInterval; TCPValid says whether this sample
	// holds a fresh census (otherwise the last one is repeated). TIME_WAIT
	// sockets have no owner: those on a port the tree listens on count.
	TCPValid       bool `json:"tcp_valid"`
	TCPEstablished int  `json:"tcp_established"`
	TCPCloseWait   int  `json:"tcp_close_wait"`
	TCPTimeWait    int  `json:"tcp_time_wait"`
	TCPListen      int  `json:"tcp_listen"`

	// cgroup v2 memory, for --unit targets (CgroupValid says so), bytes.
	// MemMax is 0 when the cgroup's memory.max is "max".
	CgroupValid bool   `json:"cgroup_valid"`
	MemCurrent  uint64 `json:"mem_current_bytes"`
	MemMax      uint64 `json:"mem_max_bytes"`
	MemAnon     uint64 `json:"mem_anon_bytes"`
	MemFile     uint64 `json:"mem_file_bytes"`

	// RSSValid and ThreadsValid say the sample holds a reading of RSS and
	// of Threads (without one the field is 0, not a reading). The local
	// /proc sampler sets both for a live tree; a remote source
	// (probes/remote) sets each when the target's metrics carry it.
	// samples.csv and the stored JSON keep their older, inverted form
	// (no_rss, no_threads on a live sample without the reading): see
	// model.Record.
	RSSValid     bool `json:"-"`
	ThreadsValid bool `json:"-"`
	// What a remote source cannot see at all. The local /proc sampler
	// leaves these false: NoCPU says the source has no CPU counter, and
	// CPUSplitUnknown that it has one for user+system only, held in
	// CPUUser.
	NoCPU           bool `json:"no_cpu,omitempty"`
	CPUSplitUnknown bool `json:"cpu_split_unknown,omitempty"`
	// Extra holds the extra gauges a remote source reads (--probe-metric
	// NAME=SERIES, and the container working set), by resource name. Each
	// is fitted like the other resources; a name ending in _bytes is
	// fitted as memory.
	Extra map[string]float64 `json:"extra,omitempty"`

	// soakd's own process, cumulative CPU seconds and RSS bytes.
	SelfUser   float64 `json:"self_cpu_user_seconds"`
	SelfSystem float64 `json:"self_cpu_system_seconds"`
	SelfRSS    uint64  `json:"self_rss_bytes"`

	// Top holds the largest processes of the tree by RSS (at most
	// SamplerOptions.TopN), for a per-process breakdown. It is the head of
	// Members, in a shape older stored samples share.
	Top []ProcStat `json:"top,omitempty"`

	// Members lists the tree's live processes at this sample, each by its
	// identity {PID, Start}, largest RSS first. A tree of more than
	// MaxMembers processes keeps only the MaxMembers largest by RSS. A
	// process that is followed from sample to sample shows its own growth
	// even when the tree's total does not (workers that grow and are
	// replaced).
	Members []Member `json:"members,omitempty"`
}

// MaxMembers caps Sample.Members: a tree of more processes keeps the
// largest by RSS. A member takes 80 bytes in memory, so 512 of them take
// 40 KiB per sample.
const MaxMembers = 512

// Member is one live process of the tree in one sample. Its figures come
// from the reads the sample makes anyway (stat and the fd count).
type Member struct {
	PID   int32  `json:"pid"`
	PPID  int32  `json:"ppid"`
	Start uint64 `json:"start_ticks"` // clock ticks after boot; with PID, the identity
	Name  string `json:"name"`        // comm
	RSS   uint64 `json:"rss_bytes"`
	// FDs is the number of open fds; NoFDs is true when /proc/PID/fd could
	// not be read (permission denied, a zombie, a process gone mid-read),
	// and FDs is then 0, not a reading.
	FDs     uint64  `json:"fds"`
	Threads uint64  `json:"threads"`
	CPU     float64 `json:"cpu_seconds"` // user + system, cumulative
	// LoadConns is how many of FDs are TCP connections to soakd's own
	// process (SamplerOptions.LoadConns): the load's, and any connection
	// soakd closed whose close the process has not read yet. It is a
	// reading when LoadConnsValid is true; samples stored before it, and
	// samplers that do not count it, leave both zero.
	LoadConns      uint64 `json:"load_conns,omitempty"`
	NoFDs          bool   `json:"no_fds,omitempty"`
	LoadConnsValid bool   `json:"load_conns_valid,omitempty"`
}

// Stat returns m in ProcStat's shape.
func (m Member) Stat() ProcStat {
	return ProcStat{PID: m.PID, Name: m.Name, RSS: m.RSS, FDs: m.FDs, Threads: m.Threads, CPU: m.CPU}
}

// ProcStat is one process's share of a Sample.
type ProcStat struct {
	PID     int32   `json:"pid"`
	Name    string  `json:"name"`
	RSS     uint64  `json:"rss_bytes"`
	FDs     uint64  `json:"fds"`
	Threads uint64  `json:"threads"`
	CPU     float64 `json:"cpu_seconds"`
}
