package remote

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/soakd/soakd/probes"
)

const processExposition = `# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 2.4576e+07
# TYPE process_virtual_memory_bytes gauge
process_virtual_memory_bytes 1.2e+09
process_open_fds 12
process_max_fds 1024
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 3.5
process_start_time_seconds 1.7e+09
go_threads{a="b"} 9
queue_depth{q="x\"y"} 3 1700000000000
`

// FuzzDecodeExposition: any exposition, in the text format, as
// OpenMetrics (through openMetricsAsText) or as delimited protobuf,
// decodes or fails without a panic; what decodes maps to samples whose
// whole-number fields are the exposed values, or zero where a value is
// not a whole number a uint64 holds (NaN, negative, past 2^64), never a
// wrapped one.
func FuzzDecodeExposition(f *testing.F) {
	f.Add([]byte(processExposition), uint8(0))
	f.Add([]byte("# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1.0 1700000000.5 # {trace_id=\"a\"} 1\n# EOF\n"), uint8(1))
	f.Add([]byte("process_resident_memory_bytes 1\nprocess_resident_memory_bytes{x=\"1\"} 2\n"), uint8(0))
	f.Add([]byte{0x0a, 0x08, 'p', 'r', 'o', 'c', 'e', 's', 's', '_'}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		var snap snapshot
		var err error
		switch kind % 3 {
		case 0:
			snap, err = decode(bytes.NewReader(data), expfmt.NewFormat(expfmt.TypeTextPlain))
		case 1:
			// Each line loses its comments, timestamp and exemplar, and
			// may gain a space and a newline.
			text := openMetricsAsText(data)
			if limit := len(data) + 2*(bytes.Count(data, []byte("\n"))+1); len(text) > limit {
				t.Fatalf("%q: OpenMetrics of %d bytes gave %d bytes of text", data, len(data), len(text))
			}
			snap, err = decode(bytes.NewReader(text), expfmt.NewFormat(expfmt.TypeTextPlain))
		case 2:
			snap, err = decode(bytes.NewReader(data), expfmt.NewFormat(expfmt.TypeProtoDelim))
		}
		if err != nil {
			return
		}
		checkSnapshot(t, snap)
	})
}

// checkSnapshot maps snap to a sample, twice (a second reading exercises
// the incarnation and counter logic), and checks its values.
func checkSnapshot(t *testing.T, snap snapshot) {
	t.Helper()
	fam, err := detect(snap, "fuzz")
	if err != nil {
		return
	}
	r, _ := read(snap, fam, []Extra{{Name: "q", Metric: "queue_depth"}})
	var n notes
	b := newBuilder(fam, &n)
	now := time.Unix(1_700_000_000, 0)
	for i := range 2 {
		s := b.sample(now.Add(time.Duration(i)*time.Second), r)
		checkWhole(t, r, kRSS, s.RSS)
		checkWhole(t, r, kVMS, s.VMS)
		checkWhole(t, r, kFDs, s.FDs)
		checkWhole(t, r, kThreads, s.Threads)
		checkCPU(t, r, s)
	}
	_ = absent(fam, r)
}

// checkWhole checks a whole-number field against the reading's value.
func checkWhole(t *testing.T, r reading, key string, got uint64) {
	t.Helper()
	v, ok := r[key]
	if !ok {
		if got != 0 {
			t.Fatalf("%s: no series, yet %d", key, got)
		}
		return
	}
	want := uint64(0)
	if v >= 0 && v < math.MaxUint64 {
		want = uint64(v)
	}
	if got != want {
		t.Fatalf("%s: exposed %v, sampled %d; want %d", key, v, got, want)
	}
}

// checkCPU checks that CPU seconds are numbers, not NaN.
func checkCPU(t *testing.T, r reading, s probes.Sample) {
	t.Helper()
	if math.IsNaN(s.CPUUser) || math.IsNaN(s.CPUSystem) || math.IsNaN(s.CPUCapacity) {
		t.Fatalf("reading %v: CPU user %v system %v capacity %v", r, s.CPUUser, s.CPUSystem, s.CPUCapacity)
	}
}
