package model

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzReadSamples: any samples.csv reads or fails without a panic, and
// what reads writes back to a file that reads to the same rows.
func FuzzReadSamples(f *testing.F) {
	var full bytes.Buffer
	if err := WriteCSV(&full, []Record{fullRecord()}); err != nil {
		f.Fatal(err)
	}
	f.Add(full.String())
	f.Add("elapsed_seconds,phase,requests,rss_bytes\n0,warmup,0,1000\n10,soak,500,1200\n20,cooldown,900,1300\n")
	f.Add("time,phase,requests,fds,extra\n2026-11-30T02:00:00+02:00,soak,1,3,q=1;h=NaN\n2026-11-30T02:00:01Z,soak,2,,\n")
	f.Add("time , phase,requests,threads,alive\n2026-11-30T02:00:00Z,baseline,1,1,false\n")
	f.Add("elapsed_seconds,phase,requests,rss_bytes\n1e300,soak,1,\"1\r\n\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		recs, resources, err := ReadSamples(strings.NewReader(in))
		if err != nil {
			return
		}
		if len(resources) == 0 {
			t.Fatalf("%q: read %d rows with no resource column", in, len(recs))
		}
		var out bytes.Buffer
		if err := WriteCSV(&out, recs); err != nil {
			t.Fatalf("%q: read, but does not write: %v", in, err)
		}
		back, _, err := ReadSamples(&out)
		if err != nil {
			t.Fatalf("%q: read and written back as %q, it does not read: %v", in, out.String(), err)
		}
		if len(back) != len(recs) {
			t.Fatalf("%q: %d rows read, %d after a round trip", in, len(recs), len(back))
		}
		for i := range recs {
			if a, b := RecordRow(recs[i]), RecordRow(back[i]); !slices.Equal(a, b) {
				t.Fatalf("%q: row %d read as %q, after a round trip %q", in, i+1, a, b)
			}
		}
	})
}
