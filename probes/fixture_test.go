package probes

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

const (
	fixtureProc   = "testdata/proc"
	fixtureCgroup = "testdata/cgroup"
)

func openFixture(t *testing.T, spec Spec) *Target {
	t.Helper()
	spec.ProcRoot, spec.CgroupRoot = fixtureProc, fixtureCgroup
	tg, err := Open(context.Background(), spec, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return tg
}

// wantFixtureTree is the sum over fixture processes 100, 101 and 102 (200
// is unrelated); see testdata/proc.
func wantFixtureTree() Sample {
	page := uint64(os.Getpagesize())
	return Sample{
		Alive: true, RootPID: 100, RootStart: 5000, Incarnation: 1, Procs: 3, RSSValid: true, ThreadsValid: true,
		RSS: 1600 * page, VMS: 160 << 20, Swap: 10 << 10,
		SmapsValid: true, PSS: 4300 << 10, USS: 420 << 10,
		PSSAnon: (180 + 20 + 40 + 8) << 10, PSSAnonValid: true, USSDirty: 260 << 10, USSDirtyValid: true,
		FDsValid: true, FDs: 10, FDLimit: 1024, Threads: 4,
		CPUUser: 1.75, CPUSystem: 0.65, CtxVoluntary: 7 + 11 + 30 + 1, CtxInvol: 3 + 1 + 4,
		IOValid: true, ReadBytes: 4096, WriteBytes: 12288, ReadChars: 1010, WriteChars: 2020,
		TCPValid: true, TCPEstablished: 1, TCPCloseWait: 1, TCPTimeWait: 3, TCPListen: 2,
		RunqueueValid: true,
		CPUCapacity:   1.5, CPUCapacitySource: "cpu.max 1.5 cores (/system.slice/nginx.service); affinity 2 CPUs; cpuset 4 CPUs (/)",
		HostCPUValid: true, HostCPUBusy: 1.5, HostCPUTotal: 10, HostCPUs: 2,
	}
}

// comparable strips the fields a fixture cannot fix (time, soakd itself,
// the per-process breakdown).
func comparable(s Sample) Sample {
	s.Time = time.Time{}
	s.SelfUser, s.SelfSystem, s.SelfRSS = 0, 0, 0
	s.Top, s.Members = nil, nil
	s.CPUUser = float64(int(s.CPUUser*100+0.5)) / 100
	s.CPUSystem = float64(int(s.CPUSystem*100+0.5)) / 100
	return s
}

func TestFixtureTargets(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want func() Sample
	}{
		{name: "pid", spec: Spec{PID: 100}, want: wantFixtureTree},
		{name: "match skips a matching child", spec: Spec{Match: "^nginx: "}, want: wantFixtureTree},
		{name: "port owner is the master, not the worker", spec: Spec{URL: "http://127.0.0.1:8080/"}, want: wantFixtureTree},
		{name: "unit", spec: Spec{Unit: "nginx"}, want: func() Sample {
			s := wantFixtureTree()
			s.CgroupValid, s.MemCurrent, s.MemMax, s.MemAnon, s.MemFile = true, 73728000, 0, 52428800, 20971520
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := openFixture(t, tt.spec)
			s := NewSampler(tg, SamplerOptions{Log: zaptest.NewLogger(t)})
			for round := 1; round <= 2; round++ { // a second sample adds nothing
				got, want := s.Sample(), tt.want()
				if round == 2 { // smaps, the TCP census and the thread pass are not due: repeated
					want.SmapsValid, want.TCPValid, want.RunqueueValid = false, false, false
					want.PSSAnonValid, want.USSDirtyValid = false, false
					want.HostCPUValid, want.HostCPUBusy, want.HostCPUTotal, want.HostCPUs = false, 0, 0, 0
				}
				if c, w := comparable(got), comparable(want); !reflect.DeepEqual(c, w) {
					t.Errorf("round %d:\ngot  %+v\nwant %+v", round, c, w)
				}
				if len(got.Top) != 3 || got.Top[0].PID != 100 || got.Top[0].FDs != 4 || got.Top[0].Name != "nginx: master (x) y" {
					t.Errorf("round %d: top = %+v; want pids 100, 101, 102 with 100 first (4 fds)", round, got.Top)
				}
				checkFixtureMembers(t, round, got.Members)
			}
			if d := tg.Describe(); !strings.Contains(d, "pid 100 (nginx: master process /usr/sbin/nginx)") {
				t.Errorf("Describe() = %q; want it to name pid 100 and its command line", d)
			}
		})
	}
}

func TestFixtureOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{name: "two ways", spec: Spec{PID: 1, Match: "x"},
			want: "target.match: set only one of target.pid, target.pidfile, target.match, target.unit or target.exec (also set: target.pid)"},
		{name: "none and remote URL", spec: Spec{URL: "http://example.com:80/"},
			want: `target: no target given and the URL's host "example.com" is not local, so its port owner cannot be looked up; set one of target.pid, target.pidfile, target.match, target.unit or target.exec`},
		{name: "none and no URL", spec: Spec{},
			want: "target: no target given and no URL to find the server by its port; set one of target.pid, target.pidfile, target.match, target.unit or target.exec"},
		{name: "nobody listens", spec: Spec{URL: "http://[::1]:9/"},
			want: "target: no process listens on TCP port 9 (from the URL); start the server or set target.pid, target.pidfile, target.match, target.unit or target.exec"},
		{name: "missing pid", spec: Spec{PID: 999}, want: "target.pid: 999: no such process (open testdata/proc/999/stat: no such file or directory)"},
		{name: "bad regexp", spec: Spec{Match: "("}, want: "target.match: \"(\": bad regexp: missing closing )"},
		{name: "no match", spec: Spec{Match: "postgres"}, want: `target.match: "postgres": 0 root processes match, want 1: none; refine the regexp or use target.pid`},
		{name: "two roots", spec: Spec{Match: "helper|bash"},
			want: `target.match: "helper|bash": 2 root processes match, want 1: pid 102 (helper --x), pid 200 (-bash); refine the regexp or use target.pid`},
		{name: "unknown unit", spec: Spec{Unit: "postgres.service"},
			want: "target.unit: postgres.service: no cgroup directory of that name under testdata/cgroup; is the unit running (systemctl status postgres.service)?"},
		{name: "bad exec", spec: Spec{Exec: `server 'oops`}, want: `target.exec: "server 'oops": unterminated ' quote`},
		{name: "pidfile missing", spec: Spec{PIDFile: "testdata/nope.pid"}, want: "target.pidfile: testdata/nope.pid: open testdata/nope.pid: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.ProcRoot, tt.spec.CgroupRoot = fixtureProc, fixtureCgroup
			_, err := Open(context.Background(), tt.spec, zaptest.NewLogger(t))
			if errText(err) != tt.want {
				t.Errorf("got  %q\nwant %q", errText(err), tt.want)
			}
		})
	}
}

func TestAccumulatorKeepsTotalsMonotonic(t *testing.T) {
	a := newAccumulator()
	p1, p2 := procID{PID: 10, Start: 1}, procID{PID: 11, Start: 2}
	reused := procID{PID: 10, Start: 99}
	steps := []struct {
		name  string
		obs   map[procID]uint64
		total uint64
	}{
		{"two new processes contribute their whole value", map[procID]uint64{p1: 100, p2: 50}, 150},
		{"deltas add", map[procID]uint64{p1: 120, p2: 55}, 175},
		{"a vanished process keeps its last value", map[procID]uint64{p1: 130}, 185},
		{"a reused PID is a new process", map[procID]uint64{p1: 130, reused: 7}, 192},
		{"a counter that went down counts as new", map[procID]uint64{p1: 5, reused: 7}, 197},
	}
	for _, st := range steps {
		for id, v := range st.obs {
			a.observe(id, counters{UTime: v})
		}
		a.sweep()
		if a.total.UTime != st.total {
			t.Errorf("%s: total %d; want %d", st.name, a.total.UTime, st.total)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "nginx -g 'daemon off;'", want: []string{"nginx", "-g", "daemon off;"}},
		{in: `srv --name "a \"b\" c" x\ y`, want: []string{"srv", "--name", `a "b" c`, "x y"}},
		{in: `a "" ''`, want: []string{"a", "", ""}},
		{in: `a "\n"`, want: []string{"a", `\n`}},
		{in: "  a\t b  ", want: []string{"a", "b"}},
		{in: "", wantErr: "empty command"},
		{in: `a "b`, wantErr: `unterminated " quote`},
		{in: `a b\`, wantErr: "trailing backslash"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := splitCommand(tt.in)
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestLocalPort(t *testing.T) {
	tests := []struct {
		in      string
		want    uint16
		wantErr bool
	}{
		{"http://127.0.0.1:8080/x", 8080, false},
		{"http://localhost/", 80, false},
		{"https://[::1]/", 443, false},
		{"http://127.0.0.2:81", 81, false},
		{"http://10.0.0.1:80/", 0, true},
		{"http://example.com/", 0, true},
		{"ftp://127.0.0.1/", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := localPort(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestFixtureUnitRestart(t *testing.T) {
	cg := t.TempDir()
	if err := os.CopyFS(cg, os.DirFS(fixtureCgroup)); err != nil {
		t.Fatal(err)
	}
	procs := filepath.Join(cg, "system.slice/nginx.service/cgroup.procs")
	tg, err := Open(context.Background(), Spec{Unit: "nginx.service", ProcRoot: fixtureProc, CgroupRoot: cg}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(tg, SamplerOptions{Log: zaptest.NewLogger(t)})
	steps := []struct {
		name        string
		members     string
		alive       bool
		root        int32
		procs       int
		incarnation int
	}{
		{"running", "100\n101\n102\n", true, 100, 3, 1},
		{"stopped", "", false, 100, 0, 1},
		{"started again with another main process", "200\n", true, 200, 1, 2},
	}
	for _, st := range steps {
		if err := os.WriteFile(procs, []byte(st.members), 0o644); err != nil {
			t.Fatal(err)
		}
		got := s.Sample()
		if got.Alive != st.alive || got.RootPID != st.root || got.Procs != st.procs || got.Incarnation != st.incarnation {
			t.Errorf("%s: got alive %v root %d procs %d incarnation %d; want %v %d %d %d",
				st.name, got.Alive, got.RootPID, got.Procs, got.Incarnation, st.alive, st.root, st.procs, st.incarnation)
		}
		if (tg.Exit() == nil) != st.alive {
			t.Errorf("%s: Exit() = %+v; want nil only while alive", st.name, tg.Exit())
		}
	}
}

// checkFixtureMembers checks the members of the fixture tree: identities,
// parents and each process's own figures, largest RSS first.
func checkFixtureMembers(t *testing.T, round int, got []Member) {
	t.Helper()
	page := uint64(os.Getpagesize())
	want := []Member{
		{PID: 100, Start: 5000, PPID: 1, Name: "nginx: master (x) y", RSS: 1000 * page, FDs: 4, Threads: 1, CPU: 2},
		{PID: 101, Start: 5100, PPID: 100, Name: "nginx", RSS: 500 * page, FDs: 5, Threads: 2, CPU: 0.3},
		{PID: 102, Start: 5200, PPID: 101, Name: "cache helper", RSS: 100 * page, FDs: 1, Threads: 1, CPU: 0.1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round %d: members\ngot  %+v\nwant %+v", round, got, want)
	}
}
