package probes

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// smapsFixture is a /proc/PID/smaps cut to one mapping of each class, as
// Linux 6 writes it (fields trimmed to those soakd reads and a few it
// skips).
const smapsFixture = `55d0c0a00000-55d0c0a21000 r-xp 00000000 fe:00 247026                     /usr/bin/my server
Size:                132 kB
Rss:                  20 kB
Pss:                  20 kB
Private_Clean:        20 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
THPeligible:           0
VmFlags: rd ex mr mw me
55d0c1000000-55d0c1400000 rw-p 00000000 00:00 0                          [heap]
Size:               4096 kB
Rss:                3000 kB
Pss:                3000 kB
Private_Clean:         0 kB
Private_Dirty:      3000 kB
Anonymous:          3000 kB
VmFlags: rd wr mr mw me ac
7f0000200000-7f0000a00000 rw-p 00000000 00:00 0 
Size:               8192 kB
Rss:                8192 kB
Pss:                8192 kB
Private_Clean:         0 kB
Private_Dirty:      8192 kB
Anonymous:          8192 kB
7f0004000000-7f0004100000 rw-p 00000000 00:00 0 
Size:               1024 kB
Rss:                 100 kB
Pss:                 100 kB
Private_Dirty:       100 kB
Anonymous:           100 kB
7f0004100000-7f0008000000 ---p 00000000 00:00 0 
Size:              64512 kB
Rss:                   0 kB
7f1000000000-7f1000100000 rw-s 00000000 00:01 1234                       /SYSV0000abcd (deleted)
Size:               1024 kB
Rss:                 512 kB
Pss:                 256 kB
7f1000200000-7f1000300000 rw-s 00000000 00:01 1235                       /memfd:pool (deleted)
Size:               1024 kB
Rss:                  64 kB
7f1000400000-7f1000500000 rw-s 00000000 00:01 1236                       
Size:               1024 kB
Rss:                  32 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                  16 kB
Private_Dirty:        16 kB
Anonymous:            16 kB
7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]
Size:                  8 kB
Rss:                   4 kB
`

func TestParseSmapsGroupsByClass(t *testing.T) {
	mb := newMapsBuilder(time.Unix(0, 0))
	mb.pid = 7
	if bad := parseSmaps([]byte(smapsFixture), map[string]string{}, mb.add); bad != 0 {
		t.Errorf("bad lines = %d; want 0", bad)
	}
	s := mb.snap
	want := map[string]struct {
		rss   uint64
		count int
	}{
		"/usr/bin/my server": {20 << 10, 1},
		MapHeap:              {3000 << 10, 1},
		MapAnon:              {8292 << 10, 3},
		MapShared:            {608 << 10, 3},
		MapStack:             {16 << 10, 1},
		MapKernel:            {4 << 10, 1},
	}
	for name, w := range want {
		if g := s.Groups[name]; g.RSS != w.rss || g.Count != w.count {
			t.Errorf("%s: rss %d, count %d; want %d, %d", name, g.RSS, g.Count, w.rss, w.count)
		}
	}
	if len(s.Groups) != len(want) {
		t.Errorf("groups = %v; want %d of them", s.Groups, len(want))
	}
	if s.Mappings != 10 {
		t.Errorf("mappings = %d; want 10", s.Mappings)
	}
	// The two anonymous mappings holding memory are kept by address; the
	// one at a 64 MiB boundary is shaped like a glibc arena.
	if len(s.Anon) != 2 || s.Anon[0].Arena || !s.Anon[1].Arena || s.Anon[1].PID != 7 || s.Anon[1].Size != 1<<20 {
		t.Errorf("anon = %+v; want the 8 MiB mapping (no arena) and the 1 MiB arena of pid 7", s.Anon)
	}
	if wantUSS := uint64(20+3000+8192+100+16) << 10; s.USS != wantUSS {
		t.Errorf("uss = %d; want %d", s.USS, wantUSS)
	}
	// The program's clean text is left out of both parts; the shared
	// memory segment counts in PSS's.
	if want := uint64(3000+8192+100+256) << 10; s.PSSAnon != want {
		t.Errorf("pss anon+shmem = %d; want %d", s.PSSAnon, want)
	}
	if want := uint64(3000+8192+100+16) << 10; s.USSDirty != want {
		t.Errorf("uss dirty = %d; want %d", s.USSDirty, want)
	}
}

func TestParseSmapsSkipsGarbage(t *testing.T) {
	n := 0
	bad := parseSmaps([]byte("garbage line\nRss: 4 kB\nzz-yy rw-p 0 0 0\n"), nil, func(mapping) { n++ })
	if n != 0 || bad != 2 {
		t.Errorf("mappings %d, bad %d; want 0, 2", n, bad)
	}
}

// MapsNow reads a live process's smaps: its [heap] or anonymous memory
// holds most of its RSS, and the paced reads replace smaps_rollup.
func TestMapsNowLive(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	s := NewSampler(openLive(t, Spec{PID: srv.pid}), SamplerOptions{Mappings: true, SmapsInterval: time.Nanosecond, Log: zap.NewNop()})
	smp := s.Sample()
	if !smp.SmapsValid || smp.PSS == 0 || smp.USS == 0 || !smp.PSSAnonValid || !smp.USSDirtyValid || smp.PSSAnon == 0 || smp.PSSAnon > smp.PSS || smp.USSDirty > smp.USS {
		t.Fatalf("sample: smaps valid %v, pss %d (anon+shmem %d, valid %v), uss %d (dirty %d, valid %v); want a reading from smaps, each part within its whole",
			smp.SmapsValid, smp.PSS, smp.PSSAnon, smp.PSSAnonValid, smp.USS, smp.USSDirty, smp.USSDirtyValid)
	}
	if got := s.TakeMaps(); len(got) != 1 {
		t.Fatalf("paced snapshots = %d; want 1", len(got))
	}
	snap, ok := s.MapsNow()
	if !ok || snap.Procs != 1 {
		t.Fatalf("MapsNow: ok %v, procs %d; want one process", ok, snap.Procs)
	}
	var total uint64
	for _, g := range snap.Groups {
		total += g.RSS
	}
	if anon := snap.Groups[MapAnon].RSS + snap.Groups[MapHeap].RSS; anon == 0 || anon > total {
		t.Errorf("anonymous + heap rss = %d of %d; want some", anon, total)
	}
	var exe bool
	for name := range snap.Groups {
		exe = exe || strings.HasSuffix(name, "/target")
	}
	if !exe {
		t.Errorf("groups %v; want the executable's own mappings by path", snap.Groups)
	}
	if pid, comm, ok := s.Root(); !ok || int(pid) != srv.pid || comm != "target" {
		t.Errorf("Root = %d %q %v; want %d \"target\"", pid, comm, ok, srv.pid)
	}
}
