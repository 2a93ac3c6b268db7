// Package hsperf reads a HotSpot JVM's performance counters from its
// hsperfdata file, the memory-mapped buffer that `jstat` reads
// (/tmp/hsperfdata_<user>/<pid>, written while -XX:+UsePerfData is on, the
// default). Reading it is a file read: no JVM is started in soakd and
// none is attached to, and the target is not paused.
//
// The format is HotSpot's PerfData buffer, version 2.0 (the only one since
// JDK 1.5): a 32-byte prologue (magic 0xcafec0c0, byte order, version,
// the accessible flag, used bytes, overflow, modification time, the first
// entry's offset and the entry count), then entries of a 20-byte header
// (entry length, name offset, vector length, type, flags, units,
// variability, data offset), a NUL-terminated name and the data: a long
// ('J') for a scalar, bytes ('B') for a string.
package hsperf

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Magic starts every hsperfdata file (written big-endian).
const Magic = 0xcafec0c0

const (
	prologueSize    = 32
	entryHeaderSize = 20
	typeLong        = 'J'
	typeByte        = 'B'
)

// Counters is one read of a buffer: the long counters by name, and the
// string ones apart.
type Counters struct {
	Longs   map[string]int64
	Strings map[string]string
}

// Parse parses a whole hsperfdata buffer. An error says which part is
// wrong; a buffer the JVM has not finished setting up (its accessible flag
// still 0) is an error too.
func Parse(b []byte) (Counters, error) {
	if len(b) < prologueSize {
		return Counters{}, fmt.Errorf("hsperfdata: %d bytes, shorter than the %d-byte prologue", len(b), prologueSize)
	}
	if m := binary.BigEndian.Uint32(b); m != Magic {
		return Counters{}, fmt.Errorf("hsperfdata: magic %#x, want %#x (not a HotSpot perf data file)", m, uint32(Magic))
	}
	var order binary.ByteOrder = binary.BigEndian
	switch b[4] {
	case 0:
	case 1:
		order = binary.LittleEndian
	default:
		return Counters{}, fmt.Errorf("hsperfdata: byte order %d, want 0 or 1", b[4])
	}
	if b[5] != 2 {
		return Counters{}, fmt.Errorf("hsperfdata: version %d.%d, only 2.x is read", b[5], b[6])
	}
	if b[7] != 1 {
		return Counters{}, fmt.Errorf("hsperfdata: not yet accessible (the JVM is starting)")
	}
	used := int(int32(order.Uint32(b[8:])))
	off := int(int32(order.Uint32(b[24:])))
	n := int(int32(order.Uint32(b[28:])))
	if used <= 0 || used > len(b) {
		used = len(b)
	}
	if off < prologueSize || off > used || n < 0 {
		return Counters{}, fmt.Errorf("hsperfdata: entries at %d (%d of them) outside the %d bytes used", off, n, used)
	}
	// n is the file's word: no more entries than fit in it are allocated for
	c := Counters{Longs: make(map[string]int64, min(n, (used-off)/entryHeaderSize)), Strings: map[string]string{}}
	for i := range n {
		if used-off < entryHeaderSize {
			return c, fmt.Errorf("hsperfdata: entry %d at %d runs past the %d bytes used", i, off, used)
		}
		e := b[off:used]
		length := int(int32(order.Uint32(e)))
		nameOff := int(int32(order.Uint32(e[4:])))
		vec := int(int32(order.Uint32(e[8:])))
		typ := e[12]
		dataOff := int(int32(order.Uint32(e[16:])))
		if length < entryHeaderSize || length > len(e) {
			return c, fmt.Errorf("hsperfdata: entry %d at %d: length %d outside %d–%d", i, off, length, entryHeaderSize, len(e))
		}
		e = e[:length]
		if nameOff < entryHeaderSize || nameOff >= length || dataOff < nameOff || dataOff > length {
			return c, fmt.Errorf("hsperfdata: entry %d at %d: name at %d, data at %d, outside its %d bytes", i, off, nameOff, dataOff, length)
		}
		name := cstring(e[nameOff:dataOff])
		switch {
		case vec == 0 && typ == typeLong:
			if length-dataOff < 8 {
				return c, fmt.Errorf("hsperfdata: entry %d (%s): a long at %d past its %d bytes", i, name, dataOff, length)
			}
			c.Longs[name] = int64(order.Uint64(e[dataOff:]))
		case vec > 0 && typ == typeByte:
			if vec > length-dataOff {
				return c, fmt.Errorf("hsperfdata: entry %d (%s): %d bytes at %d past its %d bytes", i, name, vec, dataOff, length)
			}
			c.Strings[name] = cstring(e[dataOff : dataOff+vec])
		}
		// Other types (none in HotSpot's version 2 buffers) are skipped.
		off += length
	}
	return c, nil
}

// cstring is b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
