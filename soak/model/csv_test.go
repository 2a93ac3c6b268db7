package model

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

func fullRecord() Record {
	return Record{
		Sample: probes.Sample{
			Time: time.Date(2026, 11, 30, 2, 0, 1, 500, time.UTC), Alive: true, RootPID: 42, RootStart: 123456, Incarnation: 2, Procs: 3,
			RSSValid: true, ThreadsValid: true,
			Stopped: 2, RootStopped: true,
			RSS: 100 << 20, VMS: 1 << 30, Swap: 4096, SmapsValid: true, PSS: 90 << 20, USS: 80 << 20,
			PSSAnonValid: true, PSSAnon: 60 << 20, USSDirtyValid: true, USSDirty: 70 << 20,
			FDsValid: true, FDs: 17, FDLimit: 1024, Threads: 9,
			CPUUser: 12.5, CPUSystem: 3.25, CtxVoluntary: 1000, CtxInvol: 20,
			IOValid: true, ReadBytes: 4096, WriteBytes: 8192, ReadChars: 16384, WriteChars: 32768,
			TCPValid: true, TCPEstablished: 4, TCPCloseWait: 1, TCPTimeWait: 7, TCPListen: 1,
			CgroupValid: true, MemCurrent: 200 << 20, MemMax: 1 << 30, MemAnon: 150 << 20, MemFile: 50 << 20,
			SelfUser: 1.5, SelfSystem: 0.75, SelfRSS: 10 << 20,
			RunqueueValid: true, RunqueueWait: 0.25,
			HotValid: true, HotThreadPID: 42, HotThreadTID: 44, HotThreadName: "loop", HotThreadCPU: 0.97, HotThreadWait: 0.01,
			HotProcPID: 42, HotProcName: "server", HotProcCores: 1.05,
			CPUCapacity: 1.5, CPUCapacitySource: "cpu.max 1.5 cores (/system.slice/x.service); affinity 2 CPUs",
			HostCPUValid: true, HostCPUBusy: 1234.5, HostCPUTotal: 4000.25, HostCPUs: 2,
			NoCPU: true, CPUSplitUnknown: true,
			Extra: map[string]float64{"heap_bytes": 123456789, "queue": 7.5},
		},
		Elapsed: 61.5, Phase: verdict.Soak, Requests: 123456, Errors: 3, Rate: 2000.5, P50: 0.0004, P99: 0.0021,
		EndpointRequests: []uint64{23456, 100000}, FDsNet: 31, FDsNetValid: true,
	}
}

// The round trip's record sets every field that samples.csv carries, so
// a field added to the sample without a column fails here. Members (and
// Top, their head) go to procs.csv, which has its own round trip.
func TestFullRecordSetsEveryField(t *testing.T) {
	var check func(v reflect.Value, path string)
	check = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+v.Type().Field(i).Name
			switch {
			case name == "Sample.Members" || name == "Sample.Top":
			case f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[time.Time]():
				check(f, name+".")
			case f.IsZero():
				t.Errorf("fullRecord leaves %s zero: set it, and give it a samples.csv column", name)
			}
		}
	}
	check(reflect.ValueOf(fullRecord()), "")
}

func TestCSVRoundTrip(t *testing.T) {
	full := fullRecord()
	sparse := full
	sparse.RSSValid, sparse.RSS, sparse.ThreadsValid, sparse.Threads = false, 0, false, 0
	sparse.SmapsValid, sparse.PSS, sparse.USS = false, 0, 0
	sparse.FDsValid, sparse.FDs = false, 0
	sparse.IOValid, sparse.ReadBytes, sparse.WriteBytes, sparse.ReadChars, sparse.WriteChars = false, 0, 0, 0, 0
	sparse.TCPValid, sparse.TCPEstablished, sparse.TCPCloseWait, sparse.TCPTimeWait, sparse.TCPListen = false, 0, 0, 0, 0
	sparse.CgroupValid, sparse.MemCurrent, sparse.MemMax, sparse.MemAnon, sparse.MemFile = false, 0, 0, 0, 0
	sparse.RunqueueValid, sparse.RunqueueWait = false, 0
	sparse.HotValid, sparse.HotThreadPID, sparse.HotThreadTID, sparse.HotThreadName = false, 0, 0, ""
	sparse.HotThreadCPU, sparse.HotThreadWait, sparse.HotProcPID, sparse.HotProcName, sparse.HotProcCores = 0, 0, 0, "", 0
	sparse.CPUCapacity, sparse.CPUCapacitySource = 0, ""
	sparse.HostCPUValid, sparse.HostCPUBusy, sparse.HostCPUTotal, sparse.HostCPUs = false, 0, 0, 0
	sparse.Stopped, sparse.RootStopped = 0, false
	sparse.Phase = verdict.Cooldown
	for _, tc := range []struct {
		name string
		rec  Record
	}{{"every field", full}, {"fields not read are empty", sparse}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := CreateCSVEndpoints(dir+"/samples.csv", len(tc.rec.EndpointRequests))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(tc.rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(dir + "/samples.csv")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ReadCSV(f)
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
	want.ReadChars, want.WriteChars, want.RootStart = 0, 0, 0
	want.Stopped, want.RootStopped = 0, false
	want.NoCPU, want.CPUSplitUnknown, want.Extra = false, false, nil
	want.EndpointRequests = nil
	want.PSSAnonValid, want.PSSAnon, want.USSDirtyValid, want.USSDirty = false, 0, false, 0
	want.FDsNetValid, want.FDsNet = false, 0
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
		{"unknown column", head + ",bogus\n", fmt.Sprintf(`line 1: column %d "bogus" is not a samples.csv column`, len(CSVHeader)+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadCSV error = %v; want it to contain %q", err, tc.want)
			}
		})
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
		{"no resource", "time,phase,requests,errors\n", "line 1: no resource column: give at least one of fds, fds_net_of_load, mem_anon_bytes"},
		{"twice", "time,phase,requests,rss_bytes,rss_bytes\n", `line 1: column 5 "rss_bytes" appears twice`},
		{"not a number", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,1,2\n1,soak,2,lots\n", `line 3: column rss_bytes: "lots" is not a whole number >= 0`},
		{"empty", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,,2\n", "line 2: column requests: empty: give a value in every row, or remove the column"},
		{"bad time", "time,phase,requests,rss_bytes\nyesterday,soak,1,2\n", `line 2: column time: "yesterday" is not an RFC 3339 time`},
		{"short row", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,1\n", "line 2"},
		{"requests go back", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,500,2\n1,soak,900,2\n2,soak,3,2\n",
			"line 4: column requests: 3 is below 900 on line 3; the requests counter is cumulative and never decreases within a run: split the file at line 4"},
		{"elapsed goes back", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,500,2\n3600,soak,900,2\n1.5,soak,950,2\n",
			"line 4: column elapsed_seconds: 1.5 is below 3600 on line 3; the samples of a run are in the order they were taken, and its time never goes back: put the rows in order, or, if two runs were joined, split the file at line 4"},
		{"time goes back", "time,phase,requests,rss_bytes\n2026-11-30T02:00:00Z,soak,1,2\n2026-11-30T01:00:00Z,soak,9,2\n",
			"line 3: column time: 2026-11-30T01:00:00Z is before 2026-11-30T02:00:00Z on line 2; the samples of a run are in the order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadSamples(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

// Every column of samples.csv can be written and read, once, and every
// resource of the table has its column.
func TestEveryColumnIsWrittenAndReadOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Columns {
		if c.Format == nil || c.Parse == nil {
			t.Errorf("column %s: Format or Parse missing", c.Name)
		}
		if seen[c.Name] {
			t.Errorf("column %s appears twice", c.Name)
		}
		seen[c.Name] = true
	}
	for _, r := range Resources {
		if !seen[r.Column.Name] || ResourceColumns[r.Column.Name] != r.Name {
			t.Errorf("resource %s: column %q is not samples.csv's resource column", r.Name, r.Column.Name)
		}
	}
}

func TestEndpointColumns(t *testing.T) {
	rec := fullRecord()
	var b strings.Builder
	if err := WriteCSV(&b, []Record{rec}); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasSuffix(head, ",requests_0,requests_1") {
		t.Errorf("header ends %q; want ,requests_0,requests_1", head[max(0, len(head)-40):])
	}
	got, err := ReadCSV(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("ReadCSV: %v", err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0].EndpointRequests, rec.EndpointRequests) {
		t.Errorf("EndpointRequests = %v; want %v", got[0].EndpointRequests, rec.EndpointRequests)
	}
	one := rec
	one.EndpointRequests = nil
	b.Reset()
	if err := WriteCSV(&b, []Record{one}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "requests_0") {
		t.Errorf("one endpoint wrote requests_0; want no per-endpoint column")
	}
	base := "elapsed_seconds,phase,requests,rss_bytes"
	for _, tc := range []struct{ head, want string }{
		{base + ",requests_0,requests_2", "skip requests_1"},
		{base + ",requests_0", "one per-endpoint column"},
		{base + ",requests_01", "is not a samples.csv column"},
	} {
		_, err := ReadCSV(strings.NewReader(tc.head + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("header %q: error %v; want one saying %q", tc.head, err, tc.want)
		}
	}
}

// PSS and USS are judged on their anonymous-and-shared and dirty parts
// where a file has them, and on the whole where it has only that (an
// older soakd's file, or one made by hand); either way the resource is
// listed once.
func TestPartsFallBackToTheWhole(t *testing.T) {
	for _, tc := range []struct {
		name, csv          string
		wantPSS, wantUSS   float64
		wantResourceCounts int
	}{
		{"whole only", "elapsed_seconds,phase,requests,pss_bytes,uss_bytes\n1,soak,10,9000,8000\n", 9000, 8000, 2},
		{"whole and part", "elapsed_seconds,phase,requests,pss_bytes,uss_bytes,pss_anon_bytes,uss_dirty_bytes\n1,soak,10,9000,8000,6000,7000\n", 6000, 7000, 2},
		{"part only", "elapsed_seconds,phase,requests,pss_anon_bytes\n1,soak,10,6000\n", 6000, 0, 1},
		{"a part left empty: the whole", "elapsed_seconds,phase,requests,pss_bytes,pss_anon_bytes\n1,soak,10,9000,\n", 9000, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, resources, err := ReadSamples(strings.NewReader(tc.csv))
			if err != nil {
				t.Fatal(err)
			}
			if len(resources) != tc.wantResourceCounts {
				t.Errorf("resources = %v; want %d", resources, tc.wantResourceCounts)
			}
			pss, _ := ResourceNamed("pss")
			uss, _ := ResourceNamed("uss")
			if v, ok := pss.Value(recs[0]); !ok || v != tc.wantPSS {
				t.Errorf("pss = %v, %v; want %v", v, ok, tc.wantPSS)
			}
			wantSeries := "pss_anon_bytes"
			if tc.wantPSS == 9000 {
				wantSeries = "pss_bytes"
			}
			if got := pss.SeriesOf(recs[0]); got != wantSeries {
				t.Errorf("pss series = %q; want %q", got, wantSeries)
			}
			if tc.wantUSS > 0 {
				if v, ok := uss.Value(recs[0]); !ok || v != tc.wantUSS {
					t.Errorf("uss = %v, %v; want %v", v, ok, tc.wantUSS)
				}
			}
		})
	}
}

// TestReadSamplesLeavesOutACutLastRow: a file that ends without a line
// end (a write stopped mid-row) gives its complete rows and a
// *CutRowError; a bad row anywhere else, or a short last row that ends
// its line, is still an error.
func TestReadSamplesLeavesOutACutLastRow(t *testing.T) {
	const head = "elapsed_seconds,phase,requests,rss_bytes\n0,soak,1,4096\n1,soak,2,4096\n"
	for _, tc := range []struct {
		name, in string
		rows     int
		cutLine  int    // 0: not a cut row
		errPart  string // an error that is not a cut row
	}{
		{"cut mid-row", head + "2,soak,3", 2, 4, ""},
		{"cut in the last field", head + "2,soak,3,40", 2, 4, ""},
		{"cut after a comma", head + "2,soak,3,", 2, 4, ""},
		{"whole", head, 2, 0, ""},
		{"short last row with its line end", head + "2,soak,3\n", 0, 0, "wrong number of fields"},
		{"short row mid-file", "elapsed_seconds,phase,requests,rss_bytes\n0,soak,1\n1,soak,2,4096\n2,soak,3", 0, 0, "wrong number of fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, err := ReadSamples(strings.NewReader(tc.in))
			var cut *CutRowError
			switch {
			case tc.errPart != "":
				if err == nil || errors.As(err, &cut) || !strings.Contains(err.Error(), tc.errPart) {
					t.Errorf("error = %v; want an error containing %q, not a cut row", err, tc.errPart)
				}
			case tc.cutLine == 0:
				if err != nil || len(recs) != tc.rows {
					t.Errorf("%d rows, error %v; want %d rows and no error", len(recs), err, tc.rows)
				}
			default:
				if !errors.As(err, &cut) || cut.Line != tc.cutLine || len(recs) != tc.rows || cut.Rows != tc.rows {
					t.Fatalf("%d rows, error %v; want %d rows and line %d cut", len(recs), err, tc.rows, tc.cutLine)
				}
				if want := "line 4 is cut short"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the 2 complete rows before it") {
					t.Errorf("error %q; want it to say %q and how many rows were read", err, want)
				}
				if recs[1].Elapsed != 1 {
					t.Errorf("the rows read: %+v; want the times filled", recs)
				}
			}
		})
	}
}

// TestReadSamplesWallClockStepBack: with elapsed_seconds (soakd's
// monotonic measure) the time column is the wall clock, which a clock
// step may set back; the row is read, not refused.
func TestReadSamplesWallClockStepBack(t *testing.T) {
	in := "time,elapsed_seconds,phase,requests,rss_bytes\n2026-11-30T02:00:00Z,0,soak,1,2\n2026-11-30T01:59:59Z,1,soak,9,2\n"
	recs, _, err := ReadSamples(strings.NewReader(in))
	if err != nil || len(recs) != 2 || recs[1].Elapsed != 1 {
		t.Errorf("got %d records, %v; want 2, the second at 1 s", len(recs), err)
	}
}
