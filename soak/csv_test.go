package soak

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/verdict"
)

func fullRecord() Record {
	return Record{
		Sample: probes.Sample{
			Time: time.Date(2026, 11, 30, 2, 0, 1, 500, time.UTC), Alive: true, RootPID: 42, Incarnation: 2, Procs: 3,
			RSS: 100 << 20, VMS: 1 << 30, Swap: 4096, SmapsValid: true, PSS: 90 << 20, USS: 80 << 20,
			FDsValid: true, FDs: 17, FDLimit: 1024, Threads: 9,
			CPUUser: 12.5, CPUSystem: 3.25, CtxVoluntary: 1000, CtxInvol: 20,
			IOValid: true, ReadBytes: 4096, WriteBytes: 8192,
			TCPValid: true, TCPEstablished: 4, TCPCloseWait: 1, TCPTimeWait: 7, TCPListen: 1,
			CgroupValid: true, MemCurrent: 200 << 20, MemMax: 1 << 30, MemAnon: 150 << 20, MemFile: 50 << 20,
			SelfUser: 1.5, SelfSystem: 0.75, SelfRSS: 10 << 20,
			RunqueueValid: true, RunqueueWait: 0.25,
			HotValid: true, HotThreadPID: 42, HotThreadTID: 44, HotThreadName: "loop", HotThreadCPU: 0.97, HotThreadWait: 0.01,
			HotProcPID: 42, HotProcName: "server", HotProcCores: 1.05,
			CPUCapacity: 1.5, CPUCapacitySource: "cpu.max 1.5 cores (/system.slice/x.service); affinity 2 CPUs",
			HostCPUValid: true, HostCPUBusy: 1234.5, HostCPUTotal: 4000.25, HostCPUs: 2,
		},
		Elapsed: 61.5, Phase: verdict.Soak, Requests: 123456, Errors: 3, Rate: 2000.5, P50: 0.0004, P99: 0.0021,
	}
}

func TestCSVRoundTrip(t *testing.T) {
	full := fullRecord()
	sparse := full
	sparse.SmapsValid, sparse.PSS, sparse.USS = false, 0, 0
	sparse.FDsValid, sparse.FDs = false, 0
	sparse.IOValid, sparse.ReadBytes, sparse.WriteBytes = false, 0, 0
	sparse.TCPValid, sparse.TCPEstablished, sparse.TCPCloseWait, sparse.TCPTimeWait, sparse.TCPListen = false, 0, 0, 0, 0
	sparse.CgroupValid, sparse.MemCurrent, sparse.MemMax, sparse.MemAnon, sparse.MemFile = false, 0, 0, 0, 0
	sparse.RunqueueValid, sparse.RunqueueWait = false, 0
	sparse.HotValid, sparse.HotThreadPID, sparse.HotThreadTID, sparse.HotThreadName = false, 0, 0, ""
	sparse.HotThreadCPU, sparse.HotThreadWait, sparse.HotProcPID, sparse.HotProcName, sparse.HotProcCores = 0, 0, 0, "", 0
	sparse.CPUCapacity, sparse.CPUCapacitySource = 0, ""
	sparse.HostCPUValid, sparse.HostCPUBusy, sparse.HostCPUTotal, sparse.HostCPUs = false, 0, 0, 0
	sparse.Phase = verdict.Cooldown
	for _, tc := range []struct {
		name string
		rec  Record
	}{{"every field", full}, {"fields not read are empty", sparse}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := createCSV(dir + "/samples.csv")
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(tc.rec); err != nil {
				t.Fatal(err)
			}
			w.Close()
			var buf bytes.Buffer
			buf.WriteString(strings.Join(CSVHeader, ",") + "\n")
			buf.WriteString(strings.Join(RecordRow(tc.rec), ",") + "\n")
			got, err := ReadCSV(&buf)
			if err != nil {
				t.Fatalf("ReadCSV: %v", err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.rec) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tc.rec)
			}
		})
	}
}

// A samples.csv written before the CPU columns were added reads with
// those cells empty.
func TestReadCSVWithoutTheLaterColumns(t *testing.T) {
	rec := fullRecord()
	const first = 37 // the columns of the first release, up to self_rss_bytes
	row := RecordRow(rec)[:first]
	in := strings.Join(CSVHeader[:first], ",") + "\n" + strings.Join(row, ",") + "\n"
	got, err := ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatalf("ReadCSV: %v", err)
	}
	want := rec
	want.RunqueueValid, want.RunqueueWait = false, 0
	want.HotValid, want.HotThreadPID, want.HotThreadTID, want.HotThreadName = false, 0, 0, ""
	want.HotThreadCPU, want.HotThreadWait, want.HotProcPID, want.HotProcName, want.HotProcCores = 0, 0, 0, "", 0
	want.CPUCapacity, want.CPUCapacitySource = 0, ""
	want.HostCPUValid, want.HostCPUBusy, want.HostCPUTotal, want.HostCPUs = false, 0, 0, 0
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestReadCSVErrorsNameTheLine(t *testing.T) {
	head := strings.Join(CSVHeader, ",")
	good := strings.Join(RecordRow(fullRecord()), ",")
	bad := strings.Replace(good, ",soak,", ",lunch,", 1)
	for _, tc := range []struct{ name, in, want string }{
		{"bad header", strings.Replace(head, "rss_bytes", "rss", 1) + "\n", `line 1: column 13 "rss" is not a samples.csv column: rename it to one of time, `},
		{"bad phase", head + "\n" + good + "\n" + bad + "\n", `line 3: column phase: phase "lunch" is not one of baseline, warmup, soak, cooldown`},
		{"short row", head + "\n1,2,3\n", "wrong number of fields"},
		{"short header", "time,elapsed_seconds\n", "line 1: no phase column"},
		{"unknown column", head + ",extra\n", fmt.Sprintf(`line 1: column %d "extra" is not a samples.csv column`, len(CSVHeader)+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadCSV error = %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseWarmup(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Warmup
		err  bool
	}{
		{"0", Warmup{None: true}, false},
		{"none", Warmup{None: true}, false},
		{"10%", Warmup{Fraction: 0.1}, false},
		{"5000", Warmup{Requests: 5000}, false},
		{"30s", Warmup{Duration: 30 * time.Second}, false},
		{"100%", Warmup{}, true},
		{"-5s", Warmup{}, true},
		{"soon", Warmup{}, true},
	} {
		got, err := ParseWarmup(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseWarmup(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestWarmupDefaultIsTenPercentOfThePlannedRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       Options
		req     uint64
		elapsed time.Duration
	}{
		{"by duration", Options{Load: loadFor(0, 10*time.Minute)}, 0, time.Minute},
		{"by requests", Options{Load: loadFor(1000000, 0)}, 100000, 0},
		{"capped at 30 min", Options{Load: loadFor(0, 24*time.Hour)}, 0, 30 * time.Minute},
		{"by both, whichever first", Options{Load: loadFor(1000000, 8*time.Hour)}, 100000, 30 * time.Minute},
		{"no bound", Options{Load: loadFor(0, 0)}, 0, 60 * time.Second},
		{"explicit", Options{Load: loadFor(0, time.Hour), Warmup: Warmup{Requests: 5}}, 5, 0},
		{"none", Options{Load: loadFor(0, time.Hour), Warmup: Warmup{None: true}}, 0, 0},
	} {
		req, el := tc.o.warmupEnd()
		if req != tc.req || el != tc.elapsed {
			t.Errorf("%s: warmupEnd = %d requests, %s; want %d, %s", tc.name, req, el, tc.req, tc.elapsed)
		}
	}
}

// A run bounded by -n and -d that ends by its request count long before
// its duration leaves the default warm-up after 10 % of the requests, so
// the soak is not all warm-up.
func TestWarmupEndsAtTheFirstBoundReached(t *testing.T) {
	o := Options{Load: loadFor(1000, time.Hour)}
	r := &runner{o: &o}
	r.wReq, r.wDur = o.warmupEnd()
	if got := r.phase(Record{Elapsed: 1}); got != verdict.Baseline {
		t.Errorf("phase before the load started = %s; want baseline", PhaseName(got))
	}
	r.loadStarted, r.loadStart = true, 3 // after a 3 s baseline
	for _, tc := range []struct {
		requests uint64
		elapsed  float64
		want     verdict.Phase
	}{
		{50, 3 + 1, verdict.Warmup},
		{100, 3 + 2, verdict.Soak},     // 10 % of the requests
		{90, 3 + 6*60, verdict.Soak},   // 10 % of the duration, from the load's start
		{90, 6*60 + 2, verdict.Warmup}, // not yet 6 min of load
		{1000, 3 + 20, verdict.Soak},
	} {
		if got := r.phase(Record{Requests: tc.requests, Elapsed: tc.elapsed}); got != tc.want {
			t.Errorf("phase after %d requests, %g s = %s; want %s", tc.requests, tc.elapsed, PhaseName(got), PhaseName(tc.want))
		}
	}
}

// Sampling is paced to the run unless --interval sets it; the progress
// lines keep their own interval (the load's default, 1 s).
func TestIntervalDefaultsToAutoAndLeavesTheProgressInterval(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        Options
		sample   time.Duration
		progress time.Duration
	}{
		{"default", Options{}, 0, 0},
		{"--interval", Options{Interval: 250 * time.Millisecond}, 250 * time.Millisecond, 0},
		{"own load interval", Options{Interval: 5 * time.Second, Load: load.Options{Interval: time.Second}}, 5 * time.Second, time.Second},
	} {
		if err := tc.o.setDefaults(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.o.Interval != tc.sample || tc.o.Load.Interval != tc.progress {
			t.Errorf("%s: got sampling %s, progress %s; want %s, %s", tc.name, tc.o.Interval, tc.o.Load.Interval, tc.sample, tc.progress)
		}
	}
	o := Options{Interval: 5 * time.Millisecond}
	if err := o.setDefaults(); err == nil || !strings.Contains(err.Error(), "--interval") {
		t.Errorf("--interval 5ms: error %v; want one that names --interval", err)
	}
}

func loadFor(n uint64, d time.Duration) load.Options { return load.Options{Requests: n, Duration: d} }

// Every column of soakd's samples.csv can be read, and none other.
func TestEveryCSVColumnHasAReader(t *testing.T) {
	for _, h := range CSVHeader {
		if columnSetters[h] == nil {
			t.Errorf("column %s has no reader", h)
		}
	}
	if len(columnSetters) != len(CSVHeader) {
		t.Errorf("%d column readers for %d columns", len(columnSetters), len(CSVHeader))
	}
}

// A samples.csv made by hand needs only the time, the phase, the requests
// and one resource; the rest reads as not sampled.
func TestReadSamplesToleratesMissingColumns(t *testing.T) {
	in := "elapsed_seconds,phase,requests,rss_bytes,fds\n" +
		"0,baseline,0,1000,5\n" +
		"1.5,soak,100,2000,\n"
	recs, res, err := ReadSamples(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, []string{"rss", "fds"}) {
		t.Errorf("resources = %v; want [rss fds]", res)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records; want 2", len(recs))
	}
	r := recs[1]
	if !r.Alive || r.Incarnation != 1 || r.Phase != verdict.Soak || r.Requests != 100 || r.RSS != 2000 ||
		r.FDsValid || !recs[0].FDsValid || recs[0].FDs != 5 || r.SmapsValid || r.TCPValid {
		t.Errorf("record = %+v; want alive, incarnation 1, soak, 100 requests, 2000 B RSS, fds unread", r)
	}
	if got := r.Time.Sub(recs[0].Time); got != 1500*time.Millisecond {
		t.Errorf("times %s apart; want 1.5s from elapsed_seconds", got)
	}
	recs, _, err = ReadSamples(strings.NewReader("time,phase,requests,threads\n2026-11-30T02:00:00Z,soak,1,4\n2026-11-30T02:00:02Z,soak,9,4\n"))
	if err != nil || recs[1].Elapsed != 2 {
		t.Errorf("elapsed from the times: %v, %v; want 2 s", recs, err)
	}
}

func TestReadSamplesErrorsNameTheLineAndColumn(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no time", "phase,requests,rss_bytes\nsoak,1,2\n", "line 1: no time or elapsed_seconds column: a samples.csv needs time or elapsed_seconds, phase, requests"},
		{"no phase", "time,requests,rss_bytes\n", "line 1: no phase column"},
		{"no resource", "time,phase,requests,errors\n", "line 1: no resource column: give at least one of fds, mem_anon_bytes"},
		{"twice", "time,phase,requests,rss_bytes,rss_bytes\n", `line 1: column 5 "rss_bytes" appears twice`},
		{"not a number", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,1,2\n1,soak,2,lots\n", `line 3: column rss_bytes: "lots" is not a whole number >= 0`},
		{"empty", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,,2\n", "line 2: column requests: empty: give a value in every row, or remove the column"},
		{"bad time", "time,phase,requests,rss_bytes\nyesterday,soak,1,2\n", `line 2: column time: "yesterday" is not an RFC 3339 time`},
		{"short row", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,1\n", "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadSamples(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v; want it to contain %q", err, tc.want)
			}
		})
	}
}
