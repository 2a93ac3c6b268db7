package probes

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func TestCountCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0-1\n", 2, true},
		{"0", 1, true},
		{"0-3,8,10-11", 7, true},
		{"\t0-63\n", 64, true},
		{"", 0, false},
		{"3-1", 0, false},
		{"0,x", 0, false},
		{"0-", 0, false},
	} {
		got, ok := countCPUList([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("countCPUList(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseCPUMax(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{"max 100000\n", math.Inf(1), false},
		{"200000 100000\n", 2, false},
		{"50000 100000", 0.5, false},
		{"max", 0, true},
		{"100 0", 0, true},
		{"x 100000", 0, true},
	} {
		got, err := parseCPUMax([]byte(tc.in))
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("parseCPUMax(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	h, err := parseProcStat([]byte("cpu  10 1 5 80 4 1 2 3 7 0\ncpu0 5 0 2 40 2 0 1 1 0 0\ncpu1 5 1 3 40 2 1 1 2 0 0\nintr 5\n"))
	if err != nil || h.Busy != 22 || h.Total != 106 || h.CPUs != 2 {
		t.Errorf("got %+v, %v; want busy 22, total 106, 2 CPUs", h, err)
	}
	if _, err := parseProcStat([]byte("intr 5\n")); err == nil {
		t.Errorf("no cpu line: got no error")
	}
	if _, err := parseProcStat([]byte("cpu  1 2 x\n")); err == nil {
		t.Errorf("malformed cpu line: got no error")
	}
}

func TestCgroupHierarchies(t *testing.T) {
	hs := cgroupHierarchies([]byte("9:name=systemd:/\n4:memory:/x\n3:cpuset:/\n1:cpu,cpuacct:/docker/abc\n0::/system.slice/a.service\n"))
	var got []string
	for _, h := range hs {
		got = append(got, fmt.Sprintf("%s %s %s %v", h.mount, h.path, h.cpuset, h.quota != nil))
	}
	want := []string{"/cpuset / cpuset.effective_cpus false", "/cpu,cpuacct /docker/abc  true", " /system.slice/a.service cpuset.cpus.effective true"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q; want %q", got, want)
	}
}

// writeTree writes files (path → content) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for path, content := range files {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCapacityOf(t *testing.T) {
	const cg = "proc/7/cgroup"
	tests := []struct {
		name    string
		files   map[string]string
		allowed int
		cores   float64
		source  string
	}{
		{name: "affinity alone (cgroup v1 host)", files: map[string]string{cg: "1:cpu:/\n"}, allowed: 2,
			cores: 2, source: "affinity 2 CPUs"},
		{name: "no cgroup file, no affinity", files: map[string]string{}, cores: 0, source: ""},
		{name: "quota in the leaf", allowed: 8, files: map[string]string{
			cg: "0::/a/b\n", "sys/cpuset.cpus.effective": "0-7\n", "sys/a/b/cpu.max": "50000 100000\n"},
			cores: 0.5, source: "cpu.max 0.5 cores (/a/b); affinity 8 CPUs; cpuset 8 CPUs (/)"},
		{name: "the tighter quota of an ancestor", allowed: 8, files: map[string]string{
			cg: "0::/a/b\n", "sys/a/cpu.max": "150000 100000\n", "sys/a/b/cpu.max": "max 100000\n", "sys/cpu.max": "400000 100000\n"},
			cores: 1.5, source: "cpu.max 1.5 cores (/a); affinity 8 CPUs"},
		{name: "the nearest cpuset", allowed: 8, files: map[string]string{
			cg: "0::/a/b\n", "sys/a/cpuset.cpus.effective": "2-3\n", "sys/cpuset.cpus.effective": "0-7\n"},
			cores: 2, source: "cpuset 2 CPUs (/a); affinity 8 CPUs"},
		{name: "cgroup v1: cfs quota and cpuset", allowed: 8, files: map[string]string{
			cg: "3:cpuset:/\n1:cpu,cpuacct:/docker/abc\n0::/\n", "sys/cpuset/cpuset.effective_cpus": "0-3\n",
			"sys/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n", "sys/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
			"sys/cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "sys/cpu,cpuacct/cpu.cfs_period_us": "100000\n"},
			cores: 0.5, source: "cpu.cfs_quota_us (v1) 0.5 cores (/docker/abc); affinity 8 CPUs; cpuset (v1) 4 CPUs (/)"},
		{name: "affinity tighter than the cgroup", allowed: 1, files: map[string]string{
			cg: "0::/\n", "sys/cpuset.cpus.effective": "0-3\n", "sys/cpu.max": "max 100000\n"},
			cores: 1, source: "affinity 1 CPUs; cpuset 4 CPUs (/)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			c := capacityOf(newProcFS(filepath.Join(dir, "proc")), filepath.Join(dir, "sys"), 7, tc.allowed)
			if c.Cores != tc.cores || c.Source != tc.source {
				t.Errorf("got %v cores from %q; want %v from %q", c.Cores, c.Source, tc.cores, tc.source)
			}
		})
	}
}

// TestFixtureHotThread samples a copy of the fixture tree twice, 10 s
// apart by the sampler's clock, with the threads' schedstat and the
// processes' stat advanced in between.
func TestFixtureHotThread(t *testing.T) {
	proc := t.TempDir()
	if err := os.CopyFS(proc, os.DirFS(fixtureProc)); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(t.Context(), Spec{PID: 100, ProcRoot: proc, CgroupRoot: fixtureCgroup}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(tg, SamplerOptions{Log: zaptest.NewLogger(t), ThreadInterval: time.Second})
	now := time.Unix(1e9, 0)
	s.now = func() time.Time { return now }
	if first := s.Sample(); first.HotValid {
		t.Errorf("first sample: HotValid; want no reading before a second pass")
	}
	write := func(path, content string) {
		if err := os.WriteFile(filepath.Join(proc, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Thread 105 of process 101 ran 9.7 s and waited 0.2 s of 10 s;
	// process 101 used 985 ticks more (9.85 s).
	write("101/task/105/schedstat", "9701000000 200000000 900\n")
	write("101/task/101/schedstat", "1500000 0 12\n")
	write("101/task/105/comm", "worker-loop\n")
	write("101/stat", "101 (nginx) S 100 101 101 0 -1 4194560 100 0 0 0 1000 15 0 0 20 0 2 0 5100 52428800 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
	now = now.Add(10 * time.Second)
	got := s.Sample()
	if !got.HotValid || got.HotThreadPID != 101 || got.HotThreadTID != 105 || got.HotThreadName != "worker-loop" {
		t.Fatalf("got hot thread %d/%d %q valid %v; want 101/105 \"worker-loop\"", got.HotThreadPID, got.HotThreadTID, got.HotThreadName, got.HotValid)
	}
	if math.Abs(got.HotThreadCPU-0.97) > 1e-9 || math.Abs(got.HotThreadWait-0.02) > 1e-9 {
		t.Errorf("got on-CPU %v, waiting %v; want 0.97, 0.02", got.HotThreadCPU, got.HotThreadWait)
	}
	if got.HotProcPID != 101 || got.HotProcName != "nginx" || math.Abs(got.HotProcCores-0.985) > 1e-9 {
		t.Errorf("got hot process %d %q %v cores; want 101 \"nginx\" 0.985", got.HotProcPID, got.HotProcName, got.HotProcCores)
	}
}

// TestLiveCPUFigures samples a live server twice: the capacity, the
// machine's CPU and the busiest thread must come from the real /proc.
func TestLiveCPUFigures(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{Log: zaptest.NewLogger(t), ThreadInterval: time.Nanosecond})
	first := s.Sample()
	time.Sleep(100 * time.Millisecond)
	got := s.Sample()
	if got.CPUCapacity <= 0 || got.CPUCapacity > float64(runtime.NumCPU()) || !strings.Contains(got.CPUCapacitySource, "affinity") {
		t.Errorf("capacity %v cores from %q; want 0 < capacity ≤ %d, with the affinity", got.CPUCapacity, got.CPUCapacitySource, runtime.NumCPU())
	}
	if !got.HostCPUValid || got.HostCPUs < 1 || got.HostCPUTotal <= first.HostCPUTotal || got.HostCPUBusy > got.HostCPUTotal {
		t.Errorf("machine CPU %+v then %v/%v of %d CPUs; want a growing total", first.HostCPUTotal, got.HostCPUBusy, got.HostCPUTotal, got.HostCPUs)
	}
	if !got.HotValid || got.HotThreadPID != int32(srv.pid) || got.HotThreadTID == 0 || got.HotProcPID != int32(srv.pid) {
		t.Errorf("busiest thread %d/%d, process %d, valid %v; want threads of pid %d", got.HotThreadPID, got.HotThreadTID, got.HotProcPID, got.HotValid, srv.pid)
	}
	t.Logf("capacity %v (%s); busiest thread %d %q %.3f on CPU", got.CPUCapacity, got.CPUCapacitySource, got.HotThreadTID, got.HotThreadName, got.HotThreadCPU)
}
