package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fullRecord sets every field of a record to a distinct non-zero value.
func fullRecord(i int) model.Record {
	base := time.Date(2026, 11, 30, 2, 0, 0, 123456789, time.UTC).Add(time.Duration(i) * time.Second)
	u := uint64(1000 + i)
	return model.Record{
		Sample: probes.Sample{
			Time: base, Alive: true, RootPID: 4242, RootStart: 987654, Incarnation: 2, Procs: 3,
			RSS: u * 4096, VMS: u * 8192, Swap: 7, SmapsValid: true, PSS: u * 4000, USS: u * 3000, PSSAnonValid: true, PSSAnon: u * 2000, USSDirtyValid: true, USSDirty: u * 2500,
			FDsValid: true, FDs: 17, FDLimit: 1024, Threads: 9,
			CPUUser: 1.25 + float64(i), CPUSystem: 0.5, CtxVoluntary: 11, CtxInvol: 12, RunqueueWait: 0.125, RunqueueValid: true,
			IOValid: true, ReadBytes: 13, WriteBytes: 14, ReadChars: 15, WriteChars: 16,
			TCPValid: true, TCPEstablished: 1, TCPCloseWait: 2, TCPTimeWait: 3, TCPListen: 4,
			CgroupValid: true, MemCurrent: 21, MemMax: 22, MemAnon: 23, MemFile: 24,
			RSSValid: true, ThreadsValid: true, NoCPU: true, CPUSplitUnknown: true, Extra: map[string]float64{"heap_bytes": 26},
			SelfUser: 0.1, SelfSystem: 0.2, SelfRSS: 25,
			HotValid: true, HotThreadPID: 4242, HotThreadTID: 4243, HotThreadName: "loop", HotThreadCPU: 0.97, HotThreadWait: 0.01,
			HotProcPID: 4242, HotProcName: "nginx", HotProcCores: 1.05,
			CPUCapacity: 1.5, CPUCapacitySource: "cpu.max 1.5 cores (/system.slice/x.service)",
			HostCPUValid: true, HostCPUBusy: 26.5, HostCPUTotal: 27.5, HostCPUs: 2,
			Stopped: 1, RootStopped: true,
			Top: []probes.ProcStat{{PID: 4242, Name: "nginx", RSS: 100, FDs: 5, Threads: 1, CPU: 0.75}},
			Members: []probes.Member{
				{PID: 4242, Start: 987654, PPID: 1, Name: "nginx", RSS: 100, FDs: 5, Threads: 1, CPU: 0.75},
				{PID: 4243, Start: 987700 + u, PPID: 4242, Name: "nginx: worker", RSS: u, NoFDs: true, Threads: 2, CPU: 0.25},
			},
		},
		Elapsed: float64(i) + 0.5, Phase: verdict.Soak, Requests: u * 10, Errors: 3,
		Rate: 99.5, P50: 0.001, P99: 0.0125, EndpointRequests: []uint64{u * 4, u * 6},
		FDsNet: u + 7, FDsNetValid: true,
	}
}

// TestRecordFieldsSet guards fullRecord: a field added to model.Record or
// probes.Sample must be set there, so that the round trip covers it.
func TestRecordFieldsSet(t *testing.T) {
	checkNonZero(t, reflect.ValueOf(fullRecord(1)), "Record")
}

func checkNonZero(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.Kind() == reflect.Struct && v.Type() != reflect.TypeOf(time.Time{}) {
		for i := 0; i < v.NumField(); i++ {
			checkNonZero(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
		return
	}
	// Phase Soak is 1; Warmup would be 0 and is covered by phase tests.
	if v.IsZero() {
		t.Errorf("%s is zero in fullRecord; set it so the round trip covers it", path)
	}
}

func TestSamplesRoundTrip(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, err := s.CreateRun("web", TriggerSchedule, "pid 4242", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var want []model.Record
	for i := range 5 {
		r := fullRecord(i)
		r.Phase = verdict.Phase(i % 3)
		want = append(want, r)
		if err := s.AppendSample(id, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Samples(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d samples; want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("sample %d: time %v; want %v", i, got[i].Time, want[i].Time)
		}
		got[i].Time, want[i].Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("sample %d:\ngot  %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestRunLifecycle(t *testing.T) {
	s := openTest(t, t.TempDir())
	started := time.Date(2026, 11, 30, 2, 0, 0, 0, time.Local)
	id, err := s.CreateRun("web", TriggerAPI, "unit nginx.service", started)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusRunning || r.Job != "web" || r.Trigger != TriggerAPI || !r.Started.Equal(started) || !r.Ended.IsZero() || r.Target != "unit nginx.service" {
		t.Errorf("new run = %+v; want running web api started %v", r, started)
	}
	if _, err := s.ReportJSON(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReportJSON before the end: err %v; want ErrNotFound", err)
	}
	rep := &model.Report{
		Verdict: verdict.Leak, Load: &load.Summary{Requests: 12345},
		Resources: map[string]verdict.Resource{"rss": {Verdict: verdict.Leak, PerRequest: 48.5}},
		Started:   started, Ended: started.Add(time.Hour),
	}
	if err := s.FinishRun(id, StatusCompleted, rep, errors.New("target restarted")); err != nil {
		t.Fatal(err)
	}
	r, err = s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusCompleted || r.Verdict != verdict.Leak || r.Requests != 12345 || r.RSSPerRequest != 48.5 ||
		!r.Ended.Equal(rep.Ended) || r.Error != "target restarted" {
		t.Errorf("finished run = %+v; want completed leak 12345 48.5 ended %v", r, rep.Ended)
	}
	b, err := s.ReportJSON(id)
	if err != nil {
		t.Fatal(err)
	}
	var back model.Report
	if err := json.Unmarshal(b, &back); err != nil || back.Verdict != verdict.Leak || back.Load.Requests != 12345 {
		t.Errorf("report JSON = %s (err %v); want the stored report", b, err)
	}
}

func TestFinishRunErrors(t *testing.T) {
	s := openTest(t, t.TempDir())
	if err := s.FinishRun(99, StatusCompleted, nil, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun(missing): err %v; want ErrNotFound", err)
	}
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	if err := s.FinishRun(id, "done", nil, nil); err == nil {
		t.Error("FinishRun(status done): no error; want one")
	}
	if err := s.FinishRun(id, StatusFailed, nil, errors.New("cannot reach http://127.0.0.1:1/")); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Run(id)
	if r.Status != StatusFailed || r.Ended.IsZero() || r.Verdict != "" {
		t.Errorf("failed run = %+v; want failed with an end time and no verdict", r)
	}
}

// TestFinishRunUnencodableReport: a report JSON cannot hold (a NaN) still
// ends the run, with why in its error, instead of leaving it "running".
func TestFinishRunUnencodableReport(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	rep := &model.Report{Verdict: verdict.OverallClean}
	rep.CPU.Utilization = math.NaN()
	if err := s.FinishRun(id, StatusCompleted, rep, nil); err == nil {
		t.Error("FinishRun(NaN report): no error; want the encoding error")
	}
	r, _ := s.Run(id)
	if r.Status != StatusCompleted || r.Ended.IsZero() || !strings.Contains(r.Error, "the report was not stored") {
		t.Errorf("run = %+v; want completed with an end time and an error saying the report was not stored", r)
	}
	if _, err := s.ReportJSON(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReportJSON: err %v; want ErrNotFound", err)
	}
}

func TestNotFound(t *testing.T) {
	s := openTest(t, t.TempDir())
	for name, f := range map[string]func() error{
		"Run":        func() error { _, err := s.Run(7); return err },
		"Samples":    func() error { _, err := s.Samples(7); return err },
		"ReportJSON": func() error { _, err := s.ReportJSON(7); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if err := f(); !errors.Is(err, ErrNotFound) {
				t.Errorf("got %v; want ErrNotFound", err)
			}
		})
	}
}

func TestRunsNewestFirst(t *testing.T) {
	s := openTest(t, t.TempDir())
	for i, job := range []string{"a", "b", "a", "a", "b"} {
		if _, err := s.CreateRun(job, TriggerSchedule, "", time.Unix(int64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		job   string
		limit int
		want  []int64
	}{
		{"", 0, []int64{5, 4, 3, 2, 1}},
		{"", 2, []int64{5, 4}},
		{"a", 0, []int64{4, 3, 1}},
		{"b", 1, []int64{5}},
		{"c", 0, []int64{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.job, tt.limit), func(t *testing.T) {
			runs, err := s.Runs(tt.job, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{}
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

func TestMarkInterrupted(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	a, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	b, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	c, _ := s.CreateRun("api", TriggerAPI, "", time.Now())
	if err := s.FinishRun(b, StatusCompleted, nil, nil); err != nil {
		t.Fatal(err)
	}
	ids, err := s.MarkInterrupted()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{a, c}; !reflect.DeepEqual(ids, want) {
		t.Errorf("MarkInterrupted = %v; want %v", ids, want)
	}
	for id, want := range map[int64]string{a: StatusInterrupted, b: StatusCompleted, c: StatusInterrupted} {
		if r, _ := s.Run(id); r.Status != want {
			t.Errorf("run %d status %q; want %q", id, r.Status, want)
		}
	}
	// A crash before they were analysed and finished: they come back.
	if ids, _ := s.MarkInterrupted(); !reflect.DeepEqual(ids, []int64{a, c}) {
		t.Errorf("MarkInterrupted before they were finished = %v; want %v", ids, []int64{a, c})
	}
	for _, id := range []int64{a, c} {
		if err := s.FinishRun(id, StatusInterrupted, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if ids, _ := s.MarkInterrupted(); len(ids) != 0 {
		t.Errorf("second MarkInterrupted = %v; want none", ids)
	}
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	tests := []struct {
		name    string
		maxAge  time.Duration
		maxRuns int
		want    []int64 // remaining run IDs
	}{
		{"no bounds", 0, 0, []int64{1, 2, 3, 4, 5, 6}},
		{"by age", 3 * day, 0, []int64{1, 4, 5, 6}},
		{"by count", 0, 1, []int64{1, 5, 6}},
		{"both", 3 * day, 2, []int64{1, 4, 5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			// Run 1 is old but still running: never deleted.
			ages := []time.Duration{10 * day, 9 * day, 8 * day, 2 * day, 1 * day, 0}
			jobs := []string{"a", "a", "b", "a", "a", "b"}
			for i := range ages {
				id, _ := s.CreateRun(jobs[i], TriggerSchedule, "", now.Add(-ages[i]))
				s.AppendSample(id, fullRecord(i))
				if id != 1 {
					s.FinishRun(id, StatusCompleted, nil, nil)
				}
			}
			n, err := s.Prune(now, tt.maxAge, tt.maxRuns)
			if err != nil {
				t.Fatal(err)
			}
			if n != 6-len(tt.want) {
				t.Errorf("Prune deleted %d; want %d", n, 6-len(tt.want))
			}
			runs, _ := s.Runs("", 0)
			got := []int64{}
			for i := len(runs) - 1; i >= 0; i-- {
				got = append(got, runs[i].ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("remaining %v; want %v", got, tt.want)
			}
			ents, _ := os.ReadDir(filepath.Join(s.Path(), runsDir))
			if len(ents) != len(tt.want) {
				t.Errorf("%d entries in %s; want the %d remaining runs' directories, none of deleted runs", len(ents), runsDir, len(tt.want))
			}
		})
	}
}

func TestIDsNotReused(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, _ := s.CreateRun("a", TriggerSchedule, "", time.Unix(0, 0))
	s.FinishRun(id, StatusCompleted, nil, nil)
	if n, err := s.Prune(time.Now(), time.Hour, 0); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	id2, _ := s.CreateRun("a", TriggerSchedule, "", time.Now())
	if id2 <= id {
		t.Errorf("new run ID %d after pruning %d; want a fresh one", id2, id)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(file, "state"))
	if err == nil {
		t.Fatal("Open under a file: no error")
	}
	for _, want := range []string{file, "--state-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	s.AppendSample(id, fullRecord(0))
	s.Close()
	s2 := openTest(t, dir)
	if b, _ := os.ReadFile(filepath.Join(s2.Path(), "version")); strings.TrimSpace(string(b)) != fmt.Sprint(SchemaVersion) {
		t.Errorf("version file %q; want %d", b, SchemaVersion)
	}
	if recs, err := s2.Samples(id); err != nil || len(recs) != 1 {
		t.Errorf("after reopen: %d samples, %v; want 1", len(recs), err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	s.Close()
	os.WriteFile(filepath.Join(s.Path(), "version"), []byte(fmt.Sprint(SchemaVersion+1)), 0o600)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a newer schema: err %v; want one saying newer", err)
	}
}

// TestConcurrentReadWhileWriting reads runs and samples from several
// goroutines while one writes samples: readers take no lock.
func TestConcurrentReadWhileWriting(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	const n = 200
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				recs, err := s.Samples(id)
				if err != nil {
					errs <- err
					return
				}
				if len(recs) < last {
					errs <- fmt.Errorf("samples went from %d to %d", last, len(recs))
					return
				}
				last = len(recs)
				if _, err := s.Runs("", 10); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		if err := s.AppendSample(id, fullRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if recs, _ := s.Samples(id); len(recs) != n {
		t.Errorf("got %d samples; want %d", len(recs), n)
	}
}

func BenchmarkAppendSample(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	rec := fullRecord(1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := s.AppendSample(id, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if fi, err := os.Stat(filepath.Join(s.runDir(id), samplesFile)); err == nil {
		b.ReportMetric(float64(fi.Size())/float64(b.N), "file-bytes/sample")
	}
}

func BenchmarkSamples(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	for i := range 3600 {
		s.AppendSample(id, fullRecord(i))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Samples(id); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlainJSONRows reads rows stored as plain JSON beside compressed ones.
func TestPlainJSONRows(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	if err := s.AppendSample(id, fullRecord(0)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(fullRecord(1))
	if err := s.appendFrame(id, b); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if f, err := os.ReadFile(filepath.Join(s.runDir(id), samplesFile)); err == nil && len(f) > frameHeader {
		n := int(binary.LittleEndian.Uint32(f))
		stored = f[frameHeader:min(len(f), frameHeader+n)]
	}
	if len(stored) == 0 || stored[0] == '{' || len(stored) >= len(b)/2 {
		t.Errorf("first row is %d bytes starting %q; want zstd, under half of the JSON's %d", len(stored), stored[:min(4, len(stored))], len(b))
	}
	recs, err := s.Samples(id)
	if err != nil || len(recs) != 2 || recs[1].RSS != fullRecord(1).RSS {
		t.Errorf("Samples = %d records, %v; want both rows", len(recs), err)
	}
}
