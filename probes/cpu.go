package probes

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// parseSchedstat returns the first two fields of a schedstat file: the
// nanoseconds the task spent on a CPU and runnable, waiting on a run
// queue.
func parseSchedstat(b []byte) (run, wait uint64, ok bool) {
	f0, rest := nextField(b)
	f1, _ := nextField(rest)
	if f1 == nil {
		return 0, 0, false
	}
	run, ok0 := atou(f0)
	wait, ok1 := atou(f1)
	return run, wait, ok0 && ok1
}

// nextField returns the first space-separated field of b and the rest.
func nextField(b []byte) (field, rest []byte) {
	b = bytes.TrimLeft(b, " \t\n")
	if len(b) == 0 {
		return nil, nil
	}
	i := bytes.IndexAny(b, " \t\n")
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i:]
}

// atou parses a decimal unsigned integer without allocating.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// countCPUList counts the CPUs of a list such as "0-3,8,10-11" (the form
// of Cpus_allowed_list and cpuset.cpus.effective); ok is false for an
// empty or malformed list.
func countCPUList(b []byte) (int, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for len(b) > 0 {
		item := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			item, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		lo, hi, isRange := bytes.Cut(item, []byte("-"))
		a, ok := atou(lo)
		if !ok {
			return 0, false
		}
		z := a
		if isRange {
			if z, ok = atou(hi); !ok || z < a {
				return 0, false
			}
		}
		if z >= maxCPUs {
			return 0, false
		}
		n += int(z-a) + 1
	}
	return n, n <= maxCPUs
}

// maxCPUs bounds the CPU numbers of a list (the kernel's NR_CPUS is at
// most 8192), so that a garbled list cannot count billions of CPUs.
const maxCPUs = 1 << 20

// parseCPUMax parses cgroup v2 cpu.max, "max 100000" or "150000 100000":
// the cores the quota allows, or +Inf without a quota.
func parseCPUMax(b []byte) (float64, error) {
	quota, period, ok := bytes.Cut(bytes.TrimSpace(b), []byte(" "))
	if !ok {
		return 0, fmt.Errorf("cpu.max %q: want \"QUOTA PERIOD\"", bytes.TrimSpace(b))
	}
	p, ok := atou(period)
	if !ok || p == 0 {
		return 0, fmt.Errorf("cpu.max: period %q: not a positive integer", period)
	}
	if string(quota) == "max" {
		return math.Inf(1), nil
	}
	q, ok := atou(quota)
	if !ok {
		return 0, fmt.Errorf("cpu.max: quota %q: not an integer or \"max\"", quota)
	}
	return float64(q) / float64(p), nil
}

// hostCPU is the machine's CPU time from the "cpu" line of /proc/stat, in
// clock ticks summed over all CPUs.
type hostCPU struct {
	Busy, Total uint64
	CPUs        int // the "cpuN" lines
}

// parseProcStat reads the "cpu" and "cpuN" lines of /proc/stat. Busy is
// user + nice + system + irq + softirq + steal; idle and iowait are not
// busy (guest time is already inside user and nice).
func parseProcStat(b []byte) (hostCPU, error) {
	var h hostCPU
	seen := false
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("cpu"))
		if !ok {
			break // the cpu lines come first
		}
		if len(rest) > 0 && rest[0] != ' ' {
			h.CPUs++
			continue
		}
		var v [8]uint64
		for i := range v {
			var f []byte
			f, rest = nextField(rest)
			if v[i], ok = atou(f); !ok {
				return h, fmt.Errorf("stat: cpu line: field %d %q: not an integer", i+1, f)
			}
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		var wrapped bool
		h.Busy, wrapped = addNoWrap(user, nice, system, irq, softirq, steal)
		total, wrapped2 := addNoWrap(h.Busy, idle, iowait)
		if wrapped || wrapped2 {
			return h, fmt.Errorf("stat: cpu line: more than 2^64 ticks")
		}
		h.Total = total
		seen = true
	}
	if !seen {
		return h, fmt.Errorf("stat: no cpu line")
	}
	return h, nil
}

// addNoWrap adds vs and says whether the sum wrapped.
func addNoWrap(vs ...uint64) (s uint64, wrapped bool) {
	var carry, c uint64
	for _, v := range vs {
		s, c = bits.Add64(s, v, 0)
		carry |= c
	}
	return s, carry != 0
}

// capacity is the CPU the target may use, and what limits it.
type capacity struct {
	Cores  float64 // +Inf or 0 when nothing was found
	Source string  // the deciding limit first, then the others, "; "-joined
}

// capacityOf reads the CPU capacity of the process pid: the least of its
// affinity mask (allowed CPUs, from /proc/PID/status), the CPUs of its
// cpuset (the nearest cpuset.cpus.effective, or cgroup v1's
// cpuset.effective_cpus) and the CPU quota of its cgroup and every
// ancestor (cpu.max, or v1's cpu.cfs_quota_us over cpu.cfs_period_us; the
// tightest applies).
func capacityOf(p *procFS, cgroupRoot string, pid int32, allowed int) capacity {
	type limit struct {
		cores float64
		text  string
	}
	var limits []limit
	if allowed > 0 {
		limits = append(limits, limit{float64(allowed), fmt.Sprintf("affinity %d CPUs", allowed)})
	}
	if b, err := p.readPid(pid, "cgroup"); err == nil {
		for _, h := range cgroupHierarchies(b) {
			if h.cpuset != "" {
				if n, at, ok := cpusetOf(p, cgroupRoot+h.mount, h.path, h.cpuset); ok {
					limits = append(limits, limit{float64(n), fmt.Sprintf("%s %d CPUs (%s)", h.cpusetName, n, at)})
				}
			}
			if h.quota != nil {
				if q, at, ok := quotaOf(p, cgroupRoot+h.mount, h.path, h.quota); ok {
					limits = append(limits, limit{q, fmt.Sprintf("%s %s cores (%s)", h.quotaName, strconv.FormatFloat(q, 'g', 4, 64), at)})
				}
			}
		}
	}
	if len(limits) == 0 {
		return capacity{}
	}
	best := 0
	for i, l := range limits {
		if l.cores < limits[best].cores {
			best = i
		}
	}
	texts := []string{limits[best].text}
	for i, l := range limits {
		if i != best {
			texts = append(texts, l.text)
		}
	}
	return capacity{Cores: limits[best].cores, Source: strings.Join(texts, "; ")}
}

// hierarchy is one line of /proc/PID/cgroup: where the CPU limits of the
// process's cgroup in it are read.
type hierarchy struct {
	mount, path string // the hierarchy's directory under the cgroup root, and the cgroup's path in it
	cpuset      string // the file of the cpuset's CPUs, if this hierarchy has them
	cpusetName  string
	quota       func(p *procFS, dir string) (float64, bool) // reads the quota in cores
	quotaName   string
}

// cgroupHierarchies lists the hierarchies of a /proc/PID/cgroup file that
// hold CPU limits: the v2 one ("0::/path", mounted at the root) and the v1
// cpuset and cpu ones (mounted at root/CONTROLLERS, as systemd does).
func cgroupHierarchies(b []byte) []hierarchy {
	var hs []hierarchy
	for line := range bytes.Lines(b) {
		_, rest, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
		ctrls, path, ok2 := bytes.Cut(rest, []byte(":"))
		if !ok || !ok2 || len(path) == 0 {
			continue
		}
		if len(ctrls) == 0 {
			hs = append(hs, hierarchy{path: string(path), cpuset: "cpuset.cpus.effective", cpusetName: "cpuset",
				quota: readCPUMax, quotaName: "cpu.max"})
			continue
		}
		h := hierarchy{mount: "/" + string(ctrls), path: string(path)}
		for c := range bytes.SplitSeq(ctrls, []byte(",")) {
			switch string(c) {
			case "cpuset":
				h.cpuset, h.cpusetName = "cpuset.effective_cpus", "cpuset (v1)"
			case "cpu":
				h.quota, h.quotaName = readCFSQuota, "cpu.cfs_quota_us (v1)"
			}
		}
		if h.cpuset != "" || h.quota != nil {
			hs = append(hs, h)
		}
	}
	return hs
}

// readCPUMax reads dir/cpu.max in cores (+Inf for "max").
func readCPUMax(p *procFS, dir string) (float64, bool) {
	b, err := p.read(dir + "/cpu.max")
	if err != nil {
		return 0, false
	}
	q, err := parseCPUMax(b)
	return q, err == nil
}

// readCFSQuota reads cgroup v1's cpu.cfs_quota_us over cpu.cfs_period_us
// in dir, in cores (+Inf for a quota of -1).
func readCFSQuota(p *procFS, dir string) (float64, bool) {
	b, err := p.read(dir + "/cpu.cfs_quota_us")
	if err != nil {
		return 0, false
	}
	quota := string(bytes.TrimSpace(b))
	if quota == "-1" {
		return math.Inf(1), true
	}
	q, ok := atou([]byte(quota))
	if !ok {
		return 0, false
	}
	if b, err = p.read(dir + "/cpu.cfs_period_us"); err != nil {
		return 0, false
	}
	period, ok := atou(bytes.TrimSpace(b))
	if !ok || period == 0 {
		return 0, false
	}
	return float64(q) / float64(period), true
}

// ancestors calls fn with path and each of its parents up to "/", and
// stops when fn returns true.
func ancestors(path string, fn func(dir string) bool) {
	for {
		if fn(path) || path == "/" || path == "" {
			return
		}
		i := strings.LastIndexByte(path, '/')
		path = path[:max(i, 1)]
	}
}

// cpusetOf returns the CPU count of the nearest file at or above path.
func cpusetOf(p *procFS, root, path, file string) (n int, at string, ok bool) {
	ancestors(path, func(dir string) bool {
		b, err := p.read(root + strings.TrimSuffix(dir, "/") + "/" + file)
		if err != nil {
			return false
		}
		n, ok = countCPUList(b)
		at = dir
		return ok
	})
	return n, at, ok
}

// quotaOf returns the tightest quota at or above path.
func quotaOf(p *procFS, root, path string, read func(*procFS, string) (float64, bool)) (cores float64, at string, ok bool) {
	cores = math.Inf(1)
	ancestors(path, func(dir string) bool {
		if q, found := read(p, root+strings.TrimSuffix(dir, "/")); found && q < cores {
			cores, at, ok = q, dir, true
		}
		return false
	})
	return cores, at, ok
}

// hotThread is the busiest thread of one thread pass.
type hotThread struct {
	pid, tid  int32
	comm      string // the process's
	run, wait uint64 // nanoseconds since the previous pass
}

// hotProc is the busiest process of one thread pass.
type hotProc struct {
	pid   int32
	comm  string
	ticks uint64 // user+system since the previous pass
}

// cpuPass collects, over one thread pass, the busiest thread (by time
// runnable: on a CPU or waiting for one) and the busiest process (by
// user+system time) since the previous pass.
type cpuPass struct {
	at, prevAt time.Time
	prevRoot   procID
	thread     hotThread
	proc       hotProc
	ticks      map[procID]uint64 // each process's user+system at the last pass
	next       map[procID]uint64 // the same, being filled by this pass
}

func newCPUPass() *cpuPass {
	return &cpuPass{ticks: map[procID]uint64{}, next: map[procID]uint64{}}
}

// start begins a pass at now for the tree rooted at root.
func (c *cpuPass) start(now time.Time, root procID) {
	if root != c.prevRoot {
		c.prevAt, c.prevRoot = time.Time{}, root
		clear(c.ticks)
	}
	c.at = now
	c.thread, c.proc = hotThread{}, hotProc{}
	clear(c.next)
}

// noteProc notes a process's user+system ticks.
func (c *cpuPass) noteProc(p proc) {
	t := p.Stat.UTime + p.Stat.STime
	c.next[p.ID] = t
	if prev, ok := c.ticks[p.ID]; ok && t >= prev && (c.proc.pid == 0 || t-prev > c.proc.ticks) {
		c.proc = hotProc{pid: p.ID.PID, comm: p.Stat.Comm, ticks: t - prev}
	}
}

// noteThread notes one thread's on-CPU and run-queue time since its
// previous reading.
func (c *cpuPass) noteThread(p proc, tid int32, run, wait uint64) {
	if c.thread.tid == 0 || run+wait > c.thread.run+c.thread.wait {
		c.thread = hotThread{pid: p.ID.PID, tid: tid, comm: p.Stat.Comm, run: run, wait: wait}
	}
}

// finish ends the pass and fills out's busiest-thread and busiest-process
// fields when a previous pass of the same root gives them an interval.
func (c *cpuPass) finish(s *Sampler, out *Sample) {
	c.ticks, c.next = c.next, c.ticks
	span := c.at.Sub(c.prevAt).Seconds()
	first := c.prevAt.IsZero()
	c.prevAt = c.at
	if first || span <= 0 {
		return
	}
	out.HotValid = true
	out.HotProcPID, out.HotProcName = c.proc.pid, c.proc.comm
	out.HotProcCores = float64(c.proc.ticks) / clockTicks / span
	if c.thread.tid == 0 {
		return
	}
	h := c.thread
	out.HotThreadPID, out.HotThreadTID = h.pid, h.tid
	out.HotThreadCPU = float64(h.run) / 1e9 / span
	out.HotThreadWait = float64(h.wait) / 1e9 / span
	out.HotThreadName = h.comm
	if b, err := s.fs.readTask(h.pid, h.tid, "comm"); err == nil {
		out.HotThreadName = string(bytes.TrimSpace(b))
	}
}
