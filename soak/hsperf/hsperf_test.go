package hsperf

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// entry is one counter for build.
type entry struct {
	name string
	long int64
	str  string // a string counter when long is 0 and str is set
}

// build writes a version 2.0 buffer in byte order o, as HotSpot lays it
// out: the prologue, then each entry's header, name and data, padded to 8.
func build(o binary.ByteOrder, es []entry) []byte {
	b := make([]byte, prologueSize)
	binary.BigEndian.PutUint32(b, Magic)
	if o == binary.LittleEndian {
		b[4] = 1
	}
	b[5], b[6], b[7] = 2, 0, 1
	o.PutUint32(b[24:], prologueSize)
	o.PutUint32(b[28:], uint32(len(es)))
	for _, e := range es {
		name := append([]byte(e.name), 0)
		dataOff := entryHeaderSize + len(name)
		dataOff += (8 - dataOff%8) % 8
		var data []byte
		typ, vec := byte(typeLong), 0
		if e.str != "" && e.long == 0 {
			typ, vec = typeByte, len(e.str)+1
			data = append([]byte(e.str), 0)
		} else {
			data = make([]byte, 8)
			o.PutUint64(data, uint64(e.long))
		}
		length := dataOff + len(data)
		length += (8 - length%8) % 8
		h := make([]byte, length)
		o.PutUint32(h, uint32(length))
		o.PutUint32(h[4:], entryHeaderSize)
		o.PutUint32(h[8:], uint32(vec))
		h[12], h[13], h[14], h[15] = typ, 1, 1, 3
		o.PutUint32(h[16:], uint32(dataOff))
		copy(h[entryHeaderSize:], name)
		copy(h[dataOff:], data)
		b = append(b, h...)
	}
	o.PutUint32(b[8:], uint32(len(b)))
	return b
}

var g1 = []entry{
	{name: "sun.gc.collector.0.name", str: "G1 incremental collections"},
	{name: "sun.gc.collector.0.invocations", long: 7},
	{name: "sun.gc.collector.1.invocations", long: 1},
	{name: "sun.gc.collector.2.invocations", long: 4},
	{name: "sun.gc.generation.0.space.0.used", long: 12 << 20},
	{name: "sun.gc.generation.0.space.1.used", long: 0},
	{name: "sun.gc.generation.0.space.2.used", long: 3 << 20},
	{name: "sun.gc.generation.1.space.0.used", long: 40 << 20},
}

func TestHeapOfABuffer(t *testing.T) {
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(o.String(), func(t *testing.T) {
			c, err := Parse(build(o, g1))
			if err != nil {
				t.Fatal(err)
			}
			h, err := HeapOf(c)
			if err != nil {
				t.Fatal(err)
			}
			want := Heap{Eden: 12 << 20, Survivors: 3 << 20, Old: 40 << 20, Young: 7, Full: 1, Cycles: 4, Collector: "G1 incremental collections"}
			if h != want {
				t.Fatalf("HeapOf = %+v; want %+v", h, want)
			}
			if h.Retained() != 43<<20 {
				t.Fatalf("Retained = %v; want %v", h.Retained(), 43<<20)
			}
		})
	}
}

// A young collection under way: its count has moved at the entry, and
// the sizes are still the ones before it.
func TestHeapOfACollectionUnderWay(t *testing.T) {
	es := append(append([]entry(nil), g1...),
		entry{name: "sun.gc.collector.0.lastEntryTime", long: 5_700_000_000},
		entry{name: "sun.gc.collector.0.lastExitTime", long: 5_652_000_000})
	c, err := Parse(build(binary.LittleEndian, es))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := HeapOf(c); err != nil || !h.InYoung {
		t.Fatalf("HeapOf = %+v, %v; want InYoung", h, err)
	}
	es[len(es)-1].long = 5_710_000_000
	c, _ = Parse(build(binary.LittleEndian, es))
	if h, _ := HeapOf(c); h.InYoung {
		t.Fatalf("HeapOf = %+v after the exit; want not InYoung", h)
	}
}

func TestParseErrorsSayWhat(t *testing.T) {
	good := build(binary.LittleEndian, g1)
	for _, tc := range []struct {
		name string
		b    func() []byte
		want string
	}{
		{"short", func() []byte { return good[:10] }, "shorter than the 32-byte prologue"},
		{"magic", func() []byte { b := clone(good); b[0] = 0; return b }, "not a HotSpot perf data file"},
		{"version", func() []byte { b := clone(good); b[5] = 1; return b }, "only 2.x is read"},
		{"starting", func() []byte { b := clone(good); b[7] = 0; return b }, "not yet accessible"},
		{"cut", func() []byte { return good[:len(good)-12] }, "entry 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b()
			if tc.name == "cut" {
				binary.LittleEndian.PutUint32(b[8:], uint32(len(b)))
			}
			_, err := Parse(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v; want an error saying %q", err, tc.want)
			}
		})
	}
	c, _ := Parse(build(binary.LittleEndian, g1[:2]))
	if _, err := HeapOf(c); err == nil || !strings.Contains(err.Error(), "sun.gc.generation.0.space.0.used") {
		t.Fatalf("HeapOf without the heap's counters: %v; want an error naming the counter", err)
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// FuzzParse: any bytes parse or fail without a panic, and a parse of a
// buffer build wrote gives back its counters.
func FuzzParse(f *testing.F) {
	f.Add(build(binary.LittleEndian, g1))
	if b, err := os.ReadFile("testdata/jdk17-g1-leak4096.hsperfdata"); err == nil {
		f.Add(b)
	}
	f.Add(build(binary.BigEndian, g1[:3]))
	f.Add(make([]byte, prologueSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		for name := range c.Longs {
			if !strings.Contains(string(b), name) {
				t.Fatalf("counter %q is not in the input", name)
			}
		}
		for name, v := range c.Strings {
			if !strings.Contains(string(b), name) || !strings.Contains(string(b), v) {
				t.Fatalf("string counter %q = %q is not in the input", name, v)
			}
		}
	})
}

// A real buffer: OpenJDK 17's G1 (Debian's default-jdk-headless) serving
// testdata/zoo/Leak.java, copied after 20 000 requests that kept 4 KiB
// each.
func TestHeapOfAJDK17G1File(t *testing.T) {
	h, err := ReadHeap("testdata/jdk17-g1-leak4096.hsperfdata")
	if err != nil {
		t.Fatal(err)
	}
	want := Heap{Eden: 130023424, Survivors: 15638808, Old: 62820864, Young: 11, Collector: "G1 young collection pauses"}
	if h != want {
		t.Fatalf("HeapOf = %+v; want %+v", h, want)
	}
}
