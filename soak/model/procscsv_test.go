package model

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

// membersRecords are three samples: two workers (one of them unreadable,
// with a name that needs quoting), then a replacement, then a dead target.
func membersRecords() []Record {
	a, b, c := fullRecord(), fullRecord(), fullRecord()
	a.Members = []probes.Member{
		{PID: 4243, Start: 123456789, PPID: 42, Name: `php-fpm: pool "www", 1`, RSS: 30 << 20, FDs: 12, Threads: 1, CPU: 1.25, LoadConns: 3, LoadConnsValid: true},
		{PID: 42, Start: 123450000, PPID: 1, Name: "php-fpm", RSS: 20 << 20, NoFDs: true, Threads: 2, CPU: 0.5},
	}
	b.Time, b.Elapsed, b.Requests, b.Phase, b.Incarnation = a.Time.Add(time.Second), a.Elapsed+1.25, a.Requests+500, verdict.Cooldown, 3
	b.Members = []probes.Member{{PID: 4300, Start: 123456999, PPID: 42, Name: "php-fpm", RSS: 8 << 20, FDs: 9, Threads: 1, CPU: 0.01}}
	c.Time, c.Elapsed, c.Requests, c.Alive = b.Time.Add(time.Second), b.Elapsed+1, b.Requests, false
	c.Members = nil
	return []Record{a, b, c}
}

func TestProcsCSVRoundTrip(t *testing.T) {
	recs := membersRecords()
	dir := t.TempDir()
	w, err := CreateCSV(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	samples, procs := openRead(t, filepath.Join(dir, "samples.csv")), openRead(t, filepath.Join(dir, "procs.csv"))
	got, err := ReadCSV(samples)
	if err != nil {
		t.Fatalf("ReadCSV: %v", err)
	}
	rows, err := ReadProcsCSV(procs)
	if err != nil {
		t.Fatalf("ReadProcsCSV: %v", err)
	}
	if len(rows) != 3 {
		t.Fatalf("got %d procs.csv rows; want 3", len(rows))
	}
	if r := rows[2]; !r.Time.Equal(recs[1].Time) || r.Elapsed != recs[1].Elapsed || r.Phase != verdict.Cooldown ||
		r.Requests != recs[1].Requests || r.Incarnation != 3 {
		t.Errorf("row 3 = %+v; want the second sample's time, elapsed, phase, requests and incarnation", r)
	}
	if err := AttachMembers(got, rows); err != nil {
		t.Fatalf("AttachMembers: %v", err)
	}
	for i := range recs {
		if !reflect.DeepEqual(got[i].Members, recs[i].Members) {
			t.Errorf("sample %d members:\n got %+v\nwant %+v", i, got[i].Members, recs[i].Members)
		}
	}
	var buf bytes.Buffer
	if err := WriteProcsCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "procs.csv")); buf.String() != string(b) {
		t.Errorf("WriteProcsCSV wrote\n%s\nwant what the run's writer wrote\n%s", buf.String(), b)
	}
}

func openRead(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestReadProcsCSVErrorsNameTheLine(t *testing.T) {
	head := strings.Join(ProcsCSVHeader, ",")
	row := func(pid, name string) string {
		return "2026-11-30T02:00:01Z,1.5,soak,100,1," + pid + ",5000,1," + name + ",4096,,1,0.5,"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"bad header", strings.Replace(head, "start_ticks", "start", 1) + "\n", `procs.csv: line 1: column 7 is "start", want "start_ticks"`},
		{"bad pid after a two-line name", head + "\n" + row("7", "\"a\nb\"") + "\n" + row("x", "w") + "\n",
			`procs.csv: line 4: column pid: strconv.ParseInt: parsing "x": invalid syntax`},
		{"pid too large", head + "\n" + row("4294967296", "w") + "\n", "procs.csv: line 2: column pid:"},
		{"short row", head + "\n1,2,3\n", "wrong number of fields"},
		{"short header", "time,elapsed_seconds\n", "procs.csv: line 1: 2 columns, want 14 (time,elapsed_seconds,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadProcsCSV(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadProcsCSV error = %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestReadProcsCSVWithoutLoadConns: a procs.csv written before the
// load_conns column reads, each member's count missing (so the lives rule
// fits all its fds, as it did), and a new file's empty cell reads missing.
func TestReadProcsCSVWithoutLoadConns(t *testing.T) {
	old := strings.Join(ProcsCSVHeader[:procsCSVOldColumns], ",") + "\n2026-11-30T02:00:01Z,1.5,soak,100,1,7,5000,1,w,4096,12,1,0.5\n"
	rows, err := ReadProcsCSV(strings.NewReader(old))
	if err != nil || len(rows) != 1 {
		t.Fatalf("ReadProcsCSV of a 13-column file = %d rows, %v; want 1 row", len(rows), err)
	}
	if m := rows[0].Member; m.FDs != 12 || m.LoadConns != 0 || m.LoadConnsValid {
		t.Errorf("member = %+v; want 12 fds and no load_conns reading", m)
	}
	now := strings.Join(ProcsCSVHeader, ",") + "\n2026-11-30T02:00:01Z,1.5,soak,100,1,7,5000,1,w,4096,12,1,0.5,\n" +
		"2026-11-30T02:00:01Z,1.5,soak,100,1,8,5000,1,w,4096,12,1,0.5,5\n"
	if rows, err = ReadProcsCSV(strings.NewReader(now)); err != nil || len(rows) != 2 {
		t.Fatalf("ReadProcsCSV = %d rows, %v; want 2 rows", len(rows), err)
	}
	if m := rows[0].Member; m.LoadConnsValid {
		t.Errorf("an empty load_conns cell read as %+v; want no reading", m)
	}
	if m := rows[1].Member; m.LoadConns != 5 || !m.LoadConnsValid {
		t.Errorf("load_conns 5 read as %+v; want 5, a reading", m)
	}
}

func TestAttachMembersUnknownSample(t *testing.T) {
	recs := membersRecords()
	rows := []ProcRow{{Time: recs[0].Time, Elapsed: recs[0].Elapsed}, {Time: recs[0].Time.Add(time.Millisecond), Elapsed: 9}}
	err := AttachMembers(recs, rows)
	want := "procs.csv: row 2 (time 2026-11-30T02:00:01.0010005Z, 9 s): no sample at that time in samples.csv"
	if err == nil || err.Error() != want {
		t.Errorf("AttachMembers error = %v; want %q", err, want)
	}
}

// FuzzReadProcsCSV: any input reads without panicking, and a row that
// reads writes back to the same row.
func FuzzReadProcsCSV(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteProcsCSV(&buf, membersRecords()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add(strings.Join(ProcsCSVHeader, ",") + "\n2026-11-30T02:00:01+02:00,NaN,soak,1,1,-1,0,0,\"a\r\nb\",0,,0,-0,\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadProcsCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		for i, r := range rows {
			rec := Record{Sample: probes.Sample{Time: r.Time, Incarnation: r.Incarnation, Members: []probes.Member{r.Member}},
				Elapsed: r.Elapsed, Phase: r.Phase, Requests: r.Requests}
			back, err := parseProcRow(MemberRows(rec)[0])
			if err != nil {
				t.Fatalf("row %d %+v: written back, it does not read: %v", i+1, r, err)
			}
			if fmt.Sprint(back.Member, back.Elapsed, back.Phase, back.Requests, back.Incarnation) !=
				fmt.Sprint(r.Member, r.Elapsed, r.Phase, r.Requests, r.Incarnation) || !back.Time.Equal(r.Time) {
				t.Fatalf("row %d: read %+v, written back and read %+v", i+1, r, back)
			}
		}
	})
}
