package hsperf

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Heap is what a HotSpot JVM's counters say of its heap, in the names
// `jstat -gc` reads (generation 0 the young: eden, then the survivors;
// generation 1 the old; collector 0 the young collections, collector 1
// the full ones, collector 2, where kept, G1's concurrent cycles' pauses).
type Heap struct {
	Eden, Survivors, Old float64 // bytes used
	// Young counts the young (G1: incremental, young and mixed)
	// collections, Full the full ones, Cycles the pauses of G1's
	// concurrent cycles (remark and cleanup).
	Young, Full, Cycles int64
	// InYoung says a young collection is under way: its count has moved
	// (at the collection's entry) but the sizes are not yet the ones after
	// it (set at its exit).
	InYoung   bool
	Collector string // sun.gc.collector.0.name: "G1 young collection pauses", …
}

// Retained is the heap kept after the last young collection: survivors
// and old generation, which change only at collections (and by a humongous
// or direct old allocation), while eden fills with every request's
// garbage.
func (h Heap) Retained() float64 { return h.Survivors + h.Old }

// HeapOf picks the heap counters out of c. An error names the counter
// missing.
func HeapOf(c Counters) (Heap, error) {
	var h Heap
	need := func(name string) (int64, error) {
		v, ok := c.Longs[name]
		if !ok {
			return 0, fmt.Errorf("hsperfdata: no counter %s (not a HotSpot collector that keeps jstat's counters?)", name)
		}
		return v, nil
	}
	for _, f := range []struct {
		name string
		to   *float64
	}{
		{"sun.gc.generation.0.space.0.used", &h.Eden},
		{"sun.gc.generation.1.space.0.used", &h.Old},
	} {
		v, err := need(f.name)
		if err != nil {
			return Heap{}, err
		}
		*f.to = float64(v)
	}
	for s := 1; ; s++ {
		v, ok := c.Longs[fmt.Sprintf("sun.gc.generation.0.space.%d.used", s)]
		if !ok {
			break
		}
		h.Survivors += float64(v)
	}
	var err error
	if h.Young, err = need("sun.gc.collector.0.invocations"); err != nil {
		return Heap{}, err
	}
	h.Full = c.Longs["sun.gc.collector.1.invocations"]
	h.Cycles = c.Longs["sun.gc.collector.2.invocations"]
	h.InYoung = c.Longs["sun.gc.collector.0.lastEntryTime"] > c.Longs["sun.gc.collector.0.lastExitTime"]
	h.Collector = c.Strings["sun.gc.collector.0.name"]
	return h, nil
}

// FileOf finds the hsperfdata file of the local process pid: the JVM
// writes it under its own /tmp, in the namespace it sees, as
// hsperfdata_<user>/<its pid there>, so it is looked for through
// /proc/<pid>/root first (a container's /tmp), then in this /tmp. The
// error says where it looked.
func FileOf(pid int) (string, error) {
	ns := nsPID(pid)
	var tried []string
	for _, dir := range []string{fmt.Sprintf("/proc/%d/root/tmp", pid), os.TempDir(), "/tmp"} {
		pat := filepath.Join(dir, "hsperfdata_*", strconv.Itoa(ns))
		tried = append(tried, pat)
		m, _ := filepath.Glob(pat)
		for _, f := range m {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("no hsperfdata file for pid %d (looked for %s): the JVM runs with -XX:-UsePerfData or -XX:+PerfDisableSharedMem, or its /tmp cannot be read from here", pid, strings.Join(tried, ", "))
}

// nsPID is pid as the process sees itself: the last of NSpid in
// /proc/<pid>/status (its innermost PID namespace), else pid.
func nsPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return pid
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "NSpid:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return pid
		}
		if v, err := strconv.Atoi(f[len(f)-1]); err == nil && v > 0 {
			return v
		}
		return pid
	}
	return pid
}

// ReadHeap reads the file at path and picks its heap counters.
func ReadHeap(path string) (Heap, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Heap{}, err
	}
	c, err := Parse(b)
	if err != nil {
		return Heap{}, fmt.Errorf("%s: %w", path, err)
	}
	return HeapOf(c)
}
