package probes

import (
	"bytes"
	"math"
	"strconv"
	"testing"
)

const statSeed = "1234 (my (odd) comm) S 1 1234 1234 0 -1 4194560 100 0 0 0 " +
	"7 3 0 0 20 0 4 0 98765 123456789 2500 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0\n"

// FuzzParseStat: any /proc/PID/stat bytes parse or fail without a panic;
// a parse gives a one-letter state, a comm taken from the input, and the
// parent PID written, never a wrapped one.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte(statSeed))
	f.Add([]byte("1 (systemd) S 0 1 1 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 5 0 0 0\n"))
	f.Add([]byte("7 (a)b) Z 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStat(b)
		if err != nil {
			return
		}
		if !isLetter(s.State) {
			t.Fatalf("%q: state %q", b, s.State)
		}
		if !bytes.Contains(b, []byte("("+s.Comm+")")) {
			t.Fatalf("%q: comm %q is not in the input", b, s.Comm)
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if ppid, err := strconv.ParseUint(string(f[1]), 10, 64); err != nil || ppid != uint64(s.PPID) {
			t.Fatalf("%q: parent PID read as %d; the field says %q", b, s.PPID, f[1])
		}
	})
}

// FuzzParseStatus: /proc/PID/status, /proc/PID/io and /proc/PID/limits
// parse or fail without a panic, and a value read in kB is 1024 times the
// number written, never a wrapped product.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tnginx\nUid:\t1000\t1000\t1000\t1000\nVmSwap:\t      12 kB\n" +
		"Cpus_allowed_list:\t0-3,8\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t545\n"))
	f.Add([]byte("rchar: 1\nwchar: 2\nread_bytes: 3\nwrite_bytes: 4\ncancelled_write_bytes: 0\n"))
	f.Add([]byte("Limit                     Soft Limit           Hard Limit           Units\n" +
		"Max open files            1024                 524288               files\n"))
	f.Add([]byte("Max open files unlimited unlimited files\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := parseStatus(b); err == nil {
			checkKB(t, b, "VmSwap:", s.SwapBytes, s.HasSwapRow)
			if s.CPUsAllowed < 0 {
				t.Fatalf("%q: %d CPUs allowed", b, s.CPUsAllowed)
			}
			checkUID(t, b, s.UID)
		}
		if io, err := parseIO(b); err == nil && bytes.Count(b, []byte(":")) < 4 {
			t.Fatalf("%q: read %+v from fewer than 4 fields", b, io)
		}
		if _, err := parseNoFile(b); err == nil && !bytes.Contains(b, []byte("Max open files")) {
			t.Fatalf("%q: a limit without a \"Max open files\" line", b)
		}
	})
}

// lastValue returns the value of the last line that starts with key.
func lastValue(b []byte, key string) ([]byte, bool) {
	var val []byte
	found := false
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimRight(line, "\n"), []byte(key)); ok {
			val, found = v, true
		}
	}
	return val, found
}

// checkKB checks a value read as "N kB" against the last key line.
func checkKB(t *testing.T, b []byte, key string, got uint64, has bool) {
	t.Helper()
	val, found := lastValue(b, key)
	if found != has {
		t.Fatalf("%q: %s line found %v; the parser says %v", b, key, found, has)
	}
	if !found {
		return
	}
	n, err := strconv.ParseUint(string(bytes.Fields(val)[0]), 10, 64)
	if err != nil || n > math.MaxUint64/1024 || got != n*1024 {
		t.Fatalf("%q: %s read as %d bytes; the line says %q", b, key, got, val)
	}
}

// checkUID checks the UID against the first field of the last Uid line.
func checkUID(t *testing.T, b []byte, got uint32) {
	t.Helper()
	val, found := lastValue(b, "Uid:")
	if !found {
		return
	}
	f := bytes.Fields(val)
	want := "0"
	if len(f) > 0 {
		want = string(f[0])
	}
	if n, err := strconv.ParseUint(want, 10, 64); err != nil || n != uint64(got) {
		t.Fatalf("%q: UID read as %d; the line says %q", b, got, val)
	}
}

// FuzzParseSmapsRollup: smaps_rollup and the cgroup v2 memory files parse
// or fail without a panic; PSS and USS are 1024 times the kB written and
// never wrap, and a PID list holds only PIDs found in the input.
func FuzzParseSmapsRollup(f *testing.F) {
	f.Add([]byte("55c0e2a4d000-7ffd5a1f2000 ---p 00000000 00:00 0                          [rollup]\n" +
		"Rss:                2048 kB\nPss:                1024 kB\nPss_Anon:            512 kB\n" +
		"Private_Clean:       100 kB\nPrivate_Dirty:       200 kB\nSwap:                  0 kB\n"))
	f.Add([]byte("anon 4096\nfile 8192\nkernel 0\nanon_thp 0\n"))
	f.Add([]byte("max\n"))
	f.Add([]byte("1\n22\n333\n-4\nx\n99999999999\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := parseSmapsRollup(b); err == nil {
			if s.PSS%1024 != 0 || s.USS%1024 != 0 || s.PSSAnon%1024 != 0 || s.USSDirty%1024 != 0 || s.USSDirty > s.USS {
				t.Fatalf("%q: PSS %d USS %d PSSAnon %d USSDirty %d: not whole kB, or the dirty part over USS", b, s.PSS, s.USS, s.PSSAnon, s.USSDirty)
			}
			checkUSS(t, b, s.USS)
		}
		_, _, _ = parseMemoryStat(b)
		_, _ = parseMemMax(b)
		for _, pid := range parsePIDList(b, nil) {
			if pid <= 0 || !bytes.Contains(b, []byte(strconv.Itoa(int(pid)))) {
				t.Fatalf("%q: PID %d", b, pid)
			}
		}
	})
}

// checkUSS checks USS against the sum of the Private_* lines, done without
// wrapping.
func checkUSS(t *testing.T, b []byte, got uint64) {
	t.Helper()
	var sum float64
	for line := range bytes.Lines(b) {
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(key) != "Private_Clean" && string(key) != "Private_Dirty" {
			continue
		}
		n, _ := strconv.ParseUint(string(bytes.Fields(val)[0]), 10, 64)
		sum += float64(n) * 1024
	}
	if math.Abs(sum-float64(got)) > sum*1e-9 {
		t.Fatalf("%q: USS %d; the Private lines sum to %.0f", b, got, sum)
	}
}

// FuzzParseSchedstat: schedstat, CPU lists, cpu.max, /proc/stat and
// /proc/PID/cgroup parse or fail without a panic or an absurd value: a
// CPU count between 1 and 1<<20, a quota in cores that is a number > 0,
// busy time within the total.
func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("123456789 98765 42\n"))
	f.Add([]byte("0-3,8,10-11\n"))
	f.Add([]byte("150000 100000\n"))
	f.Add([]byte("max 100000\n"))
	f.Add([]byte("cpu  10 20 30 400 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 1 2 3 4 5 6 7 8 0 0\nintr 1\n"))
	f.Add([]byte("0::/system.slice/nginx.service\n3:cpu,cpuacct:/user.slice\n4:cpuset:/\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if run, wait, ok := parseSchedstat(b); ok && !bytes.Contains(b, []byte(strconv.FormatUint(run, 10))) {
			t.Fatalf("%q: run %d wait %d", b, run, wait)
		}
		if n, ok := countCPUList(b); ok && (n < 1 || n > 1<<20) {
			t.Fatalf("%q: %d CPUs", b, n)
		}
		if c, err := parseCPUMax(b); err == nil && (math.IsNaN(c) || c < 0) {
			t.Fatalf("%q: %v cores", b, c)
		}
		if h, err := parseProcStat(b); err == nil && (h.Busy > h.Total || h.CPUs < 0) {
			t.Fatalf("%q: busy %d of total %d, %d CPUs", b, h.Busy, h.Total, h.CPUs)
		}
		for _, h := range cgroupHierarchies(b) {
			if h.path == "" || (h.cpuset == "" && h.quota == nil) {
				t.Fatalf("%q: hierarchy %+v holds no CPU limit", b, h)
			}
		}
	})
}
