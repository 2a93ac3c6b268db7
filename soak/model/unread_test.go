package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/soakd/soakd/probes"
)

// RSSValid and ThreadsValid are stored inverted, as no_rss and no_threads
// on a live record without the reading; files from before read the same.
func TestUnreadFlagsStoredForm(t *testing.T) {
	const head = "elapsed_seconds,phase,requests,alive,rss_bytes,threads,no_rss,no_threads\n"
	for _, tc := range []struct {
		name, row, json   string
		rssRead, thrsRead bool
	}{
		{"both read", "1,soak,10,true,4096,3,,", `{"alive":true,"rss_bytes":4096,"threads":3}`, true, true},
		{"no RSS", "1,soak,10,true,0,3,true,", `{"alive":true,"threads":3,"no_rss":true}`, false, true},
		{"no threads", "1,soak,10,true,4096,0,false,true", `{"alive":true,"rss_bytes":4096,"no_threads":true}`, true, false},
		{"dead", "1,soak,10,false,0,0,,", `{"alive":false}`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := ReadCSV(strings.NewReader(head + tc.row + "\n"))
			if err != nil {
				t.Fatalf("ReadCSV: %v", err)
			}
			var fromJSON Record
			if err := json.Unmarshal([]byte(tc.json), &fromJSON); err != nil {
				t.Fatalf("json.Unmarshal: %v", err)
			}
			for _, got := range []struct {
				from string
				rec  Record
			}{{"samples.csv", recs[0]}, {"JSON", fromJSON}} {
				if got.rec.RSSValid != tc.rssRead || got.rec.ThreadsValid != tc.thrsRead {
					t.Errorf("%s: RSSValid %v, ThreadsValid %v; want %v, %v",
						got.from, got.rec.RSSValid, got.rec.ThreadsValid, tc.rssRead, tc.thrsRead)
				}
			}
			row := RecordRow(recs[0])
			noRSS, noThreads := row[columnIndex(t, "no_rss")], row[columnIndex(t, "no_threads")]
			if want := flagText(recs[0].Alive && !tc.rssRead); noRSS != want {
				t.Errorf("written no_rss %q; want %q", noRSS, want)
			}
			if want := flagText(recs[0].Alive && !tc.thrsRead); noThreads != want {
				t.Errorf("written no_threads %q; want %q", noThreads, want)
			}
			b, err := json.Marshal(fromJSON)
			if err != nil {
				t.Fatal(err)
			}
			var back Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.RSSValid != tc.rssRead || back.ThreadsValid != tc.thrsRead {
				t.Errorf("JSON round trip %s: RSSValid %v, ThreadsValid %v; want %v, %v", b, back.RSSValid, back.ThreadsValid, tc.rssRead, tc.thrsRead)
			}
		})
	}
}

func columnIndex(t *testing.T, name string) int {
	t.Helper()
	for i, n := range CSVHeader {
		if n == name {
			return i
		}
	}
	t.Fatalf("no column %s", name)
	return -1
}

func flagText(b bool) string {
	if b {
		return "true"
	}
	return ""
}

// A record that read RSS and threads holds a reading of them; one whose
// flags are unset (a remote source without the series, or a literal that
// forgot them) holds none, and the analysis leaves them out.
func TestValueNeedsTheValidFlag(t *testing.T) {
	read := Record{Sample: probes.Sample{Alive: true, RSS: 8 << 20, RSSValid: true, Threads: 4, ThreadsValid: true}}
	unread := Record{Sample: probes.Sample{Alive: true, RSS: 8 << 20, Threads: 4}}
	for _, name := range []string{"rss", "threads"} {
		res, _ := ResourceNamed(name)
		if _, ok := res.Value(read); !ok {
			t.Errorf("%s of a record that read it: not a reading; want one", name)
		}
		if v, ok := res.Value(unread); ok {
			t.Errorf("%s of a record without the flag: reading %g; want none", name, v)
		}
	}
}

// The record's JSON is what it was before the flags were turned round,
// so the store's compression dictionary (the JSON of TypicalRecord) and
// the stored records keep their bytes.
func TestRecordJSONKeepsItsKeys(t *testing.T) {
	b, err := json.Marshal(TypicalRecord())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"no_rss"`, `"no_threads"`, `"RSSValid"`, `"ThreadsValid"`, `"rss_valid"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("JSON of a record that read everything holds %s: %s", key, b)
		}
	}
	if !strings.Contains(string(b), `"rss_bytes":123456789`) || !strings.Contains(string(b), `"elapsed_seconds":1234.5`) {
		t.Errorf("JSON lost the sample's or the record's own fields: %s", b)
	}
}

// The store calls MarshalJSON directly, skipping json.Marshal's second
// pass over a Marshaler's output: the bytes must be the same.
func TestMarshalJSONIsWhatJSONMarshalWrites(t *testing.T) {
	rec := TypicalRecord()
	rec.HotProcName, rec.RSSValid = "<a&b>", false
	direct, err := rec.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	viaJSON, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if string(direct) != string(viaJSON) {
		t.Errorf("MarshalJSON:\n%s\njson.Marshal:\n%s", direct, viaJSON)
	}
}
