package probes

import (
	"os"
	"strings"
	"testing"
)

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestParseStat(t *testing.T) {
	tail := " 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 3 0 5000 104857600 1000 18446744073709551615"
	tests := []struct {
		name    string
		in      string
		want    statInfo
		wantErr string
	}{
		{name: "plain", in: "42 (nginx) S 1 42 42" + tail,
			want: statInfo{Comm: "nginx", State: 'S', PPID: 1, UTime: 150, STime: 50, NumThreads: 3, StartTime: 5000, VSize: 104857600, RSSPages: 1000}},
		{name: "comm with spaces and parentheses", in: "42 (a) b (c)) R 7 42 42" + tail,
			want: statInfo{Comm: "a) b (c)", State: 'R', PPID: 7, UTime: 150, STime: 50, NumThreads: 3, StartTime: 5000, VSize: 104857600, RSSPages: 1000}},
		{name: "empty comm", in: "42 () S 1 42 42" + tail,
			want: statInfo{Comm: "", State: 'S', PPID: 1, UTime: 150, STime: 50, NumThreads: 3, StartTime: 5000, VSize: 104857600, RSSPages: 1000}},
		{name: "no parentheses", in: "42 nginx S 1", wantErr: "stat: no comm in parentheses"},
		{name: "close before open", in: "42 )nginx( S 1", wantErr: "stat: no comm in parentheses"},
		{name: "truncated", in: "42 (nginx) S 1 42 42 0", wantErr: "stat: fewer than 24 fields"},
		{name: "bad state", in: "42 (nginx) SS 1 42 42" + tail, wantErr: `stat: field 3 (state) "SS": not one letter`},
		{name: "bad ppid", in: "42 (nginx) S x 42 42" + tail, wantErr: `stat: field 4: strconv.ParseUint: parsing "x": invalid syntax`},
		{name: "negative utime", in: "42 (nginx) S 1 42 42" + strings.Replace(tail, " 150 ", " -150 ", 1), wantErr: `stat: field 14: strconv.ParseUint: parsing "-150": invalid syntax`},
		{name: "empty", in: "", wantErr: "stat: no comm in parentheses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/proc/100/stat")
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseStat(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Comm != "nginx: master (x) y" || s.PPID != 1 || s.StartTime != 5000 {
		t.Errorf("got comm %q ppid %d start %d; want \"nginx: master (x) y\" 1 5000", s.Comm, s.PPID, s.StartTime)
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    statusInfo
		wantErr string
	}{
		{name: "full", in: "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nVmSwap:\t    12 kB\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t2\n",
			want: statusInfo{SwapBytes: 12 << 10, CtxVol: 5, CtxInvol: 2, HasCtx: true, UID: 1000, HasSwapRow: true}},
		{name: "kernel thread has no VmSwap", in: "Name:\tkthreadd\nvoluntary_ctxt_switches:\t1\n",
			want: statusInfo{CtxVol: 1, HasCtx: true}},
		{name: "no trailing newline", in: "VmSwap:\t1 kB", want: statusInfo{SwapBytes: 1024, HasSwapRow: true}},
		{name: "swap without unit", in: "VmSwap:\t12\n", wantErr: `status: VmSwap: "12": want "N kB"`},
		{name: "bad ctx", in: "voluntary_ctxt_switches:\tmany\n", wantErr: `status: voluntary_ctxt_switches: strconv.ParseUint: parsing "many": invalid syntax`},
		{name: "lines without colon are ignored", in: "garbage\nVmSwap: 2 kB\n", want: statusInfo{SwapBytes: 2048, HasSwapRow: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestParseIO(t *testing.T) {
	full := "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\ncancelled_write_bytes: 7\n"
	tests := []struct {
		name    string
		in      string
		want    ioInfo
		wantErr string
	}{
		{name: "full", in: full, want: ioInfo{RChar: 1, WChar: 2, ReadBytes: 5, WriteBytes: 6}},
		{name: "missing write_bytes", in: "rchar: 1\nwchar: 2\nread_bytes: 5\n", wantErr: "io: 3 of 4 fields (rchar, wchar, read_bytes, write_bytes)"},
		{name: "bad number", in: strings.Replace(full, "read_bytes: 5", "read_bytes: x", 1), wantErr: `io: read_bytes: strconv.ParseUint: parsing "x": invalid syntax`},
		{name: "empty", in: "", wantErr: "io: 0 of 4 fields (rchar, wchar, read_bytes, write_bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseIO([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestParseNoFile(t *testing.T) {
	fixture, err := os.ReadFile("testdata/proc/100/limits")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    uint64
		wantErr string
	}{
		{name: "fixture", in: string(fixture), want: 1024},
		{name: "unlimited", in: "Max open files            unlimited            unlimited            files\n", want: 0},
		{name: "missing", in: "Max processes 10 10 processes\n", wantErr: `limits: no "Max open files" line`},
		{name: "bad", in: "Max open files            lots            lots            files\n", wantErr: `limits: Max open files: strconv.ParseUint: parsing "lots": invalid syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNoFile([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %d; want %d", got, tt.want)
			}
		})
	}
}

func TestParseSmapsRollup(t *testing.T) {
	fixture, err := os.ReadFile("testdata/proc/100/smaps_rollup")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    smapsInfo
		wantErr string
	}{
		{name: "fixture", in: string(fixture), want: smapsInfo{PSS: 3000 << 10, USS: 300 << 10, PSSAnon: 200 << 10, USSDirty: 200 << 10, Split: true}},
		{name: "no Pss_Anon: no split", in: "Pss: 4 kB\nPss_Shmem: 1 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n", want: smapsInfo{PSS: 4 << 10, USS: 3 << 10, USSDirty: 2 << 10}},
		{name: "missing Private_Dirty", in: "Pss: 1 kB\nPrivate_Clean: 1 kB\n", wantErr: "smaps_rollup: 2 of 3 fields (Pss, Private_Clean, Private_Dirty)"},
		{name: "bad unit", in: "Pss: 1 MB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 1 kB\n", wantErr: `smaps_rollup: Pss: "1 MB": want "N kB"`},
		{name: "Pss_Dirty is not Pss", in: "Pss_Dirty: 9 kB\nPss: 1 kB\nPrivate_Clean: 2 kB\nPrivate_Dirty: 3 kB\n", want: smapsInfo{PSS: 1 << 10, USS: 5 << 10, USSDirty: 3 << 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSmapsRollup([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestParseCgroupMemory(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		want    cgroupMem
		wantErr string
	}{
		{name: "unlimited", dir: "testdata/cgroup/system.slice/nginx.service",
			want: cgroupMem{Current: 73728000, Max: 0, Anon: 52428800, File: 20971520}},
		{name: "capped", dir: "testdata/cgroup/system.slice/capped.service",
			want: cgroupMem{Current: 4096, Max: 536870912, Anon: 4096, File: 0}},
		{name: "missing", dir: "testdata/cgroup/system.slice",
			wantErr: "open testdata/cgroup/system.slice/memory.current: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readCgroupMem(newProcFS(""), tt.dir)
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestParseMemoryStat(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		anon, file uint64
		wantErr    string
	}{
		{name: "ok", in: "anon 1\nfile 2\nanon_thp 3\nfile_mapped 4\n", anon: 1, file: 2},
		{name: "missing file", in: "anon 1\n", wantErr: "1 of 2 fields (anon, file)"},
		{name: "bad", in: "anon x\nfile 2\n", wantErr: `anon: strconv.ParseUint: parsing "x": invalid syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			anon, file, err := parseMemoryStat([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if anon != tt.anon || file != tt.file {
				t.Errorf("got anon %d file %d; want %d %d", anon, file, tt.anon, tt.file)
			}
		})
	}
}

func TestParseMemMax(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{"max\n", 0, false}, {"1048576\n", 1048576, false}, {"lots\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.in), func(t *testing.T) {
			got, err := parseMemMax([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseDirentsStopsOnBadRecord(t *testing.T) {
	var names []string
	buf := make([]byte, 40)
	buf[16] = 5 // reclen shorter than the header
	parseDirents(buf, func(n []byte) { names = append(names, string(n)) })
	if len(names) != 0 {
		t.Errorf("got %v; want no names", names)
	}
}
