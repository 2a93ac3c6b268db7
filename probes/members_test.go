package probes

import (
	"testing"
	"unsafe"
)

// TestMemberListCap keeps the MaxMembers largest processes, largest first,
// with Top their head.
func TestMemberListCap(t *testing.T) {
	const n = MaxMembers + 88
	s := &Sampler{opts: SamplerOptions{TopN: 5}, names: map[procID]string{}, lastNames: map[procID]string{}}
	for i := range n {
		s.mems = append(s.mems, Member{PID: int32(i + 1), Start: uint64(i), RSS: uint64(i) * 4096})
	}
	members, top := s.memberList()
	if len(members) != MaxMembers {
		t.Fatalf("got %d members; want %d", len(members), MaxMembers)
	}
	if members[0].PID != n || members[MaxMembers-1].PID != n-MaxMembers+1 {
		t.Errorf("members run from pid %d to %d; want %d (largest) to %d", members[0].PID, members[MaxMembers-1].PID, n, n-MaxMembers+1)
	}
	if len(top) != 5 || top[0] != members[0].Stat() || top[4] != members[4].Stat() {
		t.Errorf("top = %+v; want the first 5 members", top)
	}
	s.mems[0].RSS = 1 // the scratch is reused: the sample's copy must not change
	if members[0].RSS == 1 && s.mems[0].PID == members[0].PID {
		t.Error("members share the sampler's scratch slice")
	}
}

// TestMemberNameShared gives a process the same name string in every
// sample while its comm does not change, and a new one when it does.
func TestMemberNameShared(t *testing.T) {
	s := &Sampler{opts: SamplerOptions{TopN: 5}, names: map[procID]string{}, lastNames: map[procID]string{}}
	id := procID{PID: 7, Start: 70}
	sample := func(comm string) string {
		s.mems = s.mems[:0]
		p := proc{ID: id, Stat: statInfo{Comm: string([]byte(comm))}} // a fresh string, as parseStat makes
		s.mems = append(s.mems, Member{PID: p.ID.PID, Start: p.ID.Start, Name: s.name(p)})
		members, _ := s.memberList()
		return members[0].Name
	}
	a, b, c := sample("worker"), sample("worker"), sample("renamed")
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("an unchanged comm got a new string in the next sample")
	}
	if c != "renamed" {
		t.Errorf("name after a rename = %q; want %q", c, "renamed")
	}
}

// TestZombieMemberHasNoFDs: an exited, unreaped process is a member with
// its last stat figures and no fd reading.
func TestZombieMemberHasNoFDs(t *testing.T) {
	s := &Sampler{pageSize: 4096, names: map[procID]string{}, lastNames: map[procID]string{}}
	p := proc{ID: procID{PID: 9, Start: 90}, Stat: statInfo{Comm: "worker", State: 'Z', PPID: 1, RSSPages: 0, UTime: 150, STime: 50}}
	var out Sample
	got := s.sampleProc(p, false, &out)
	want := Member{PID: 9, Start: 90, PPID: 1, Name: "worker", NoFDs: true, CPU: 2}
	if got != want {
		t.Errorf("member = %+v; want %+v", got, want)
	}
}
