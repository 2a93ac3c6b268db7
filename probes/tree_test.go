package probes

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// fakeProc is a procfs root in a temp dir whose "self" is this process,
// so the walker trusts its loadavg.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	root := t.TempDir()
	if err := os.Symlink(strconv.Itoa(os.Getpid()), filepath.Join(root, "self")); err != nil {
		t.Fatal(err)
	}
	return &fakeProc{t: t, root: root}
}

// proc writes pid's stat with its parent and start time.
func (f *fakeProc) proc(pid, ppid int, start uint64) {
	dir := filepath.Join(f.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	line := fmt.Sprintf("%d (p%d) S %d 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 %d 4096 1 0\n", pid, pid, ppid, start)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) remove(pid int) {
	if err := os.RemoveAll(filepath.Join(f.root, strconv.Itoa(pid))); err != nil {
		f.t.Fatal(err)
	}
}

// lastPID sets the last field of loadavg.
func (f *fakeProc) lastPID(pid int) {
	s := fmt.Sprintf("0.00 0.00 0.00 1/100 %d\n", pid)
	if err := os.WriteFile(filepath.Join(f.root, "loadavg"), []byte(s), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func TestWalkerSkipsListingWhileNoProcessIsCreated(t *testing.T) {
	f := newFakeProc(t)
	f.proc(10, 1, 100)
	f.proc(11, 10, 110)
	f.proc(12, 11, 120)
	f.proc(20, 1, 50)
	f.lastPID(20)
	w := newWalker(newProcFS(f.root))
	root := procID{PID: 10, Start: 100}
	steps := []struct {
		name   string
		change func()
		want   []int32
	}{
		{"first walk lists /proc", func() {}, []int32{10, 11, 12}},
		{"a dead member leaves without a listing", func() { f.remove(12) }, []int32{10, 11}},
		{"a new PID is not looked for while loadavg stands still", func() { f.proc(13, 11, 130) }, []int32{10, 11}},
		{"a moved last PID brings a listing", func() { f.lastPID(13) }, []int32{10, 11, 13}},
		{"a reparented member leaves", func() { f.proc(11, 1, 110) }, []int32{10}},
		{"a reused PID is another process", func() { f.remove(10); f.proc(10, 1, 999) }, nil},
	}
	for _, st := range steps {
		st.change()
		procs, err := w.tree(root, nil)
		var got []int32
		for _, p := range procs {
			got = append(got, p.ID.PID)
		}
		slices.Sort(got)
		if !slices.Equal(got, st.want) || (st.want == nil) != (err != nil) {
			t.Errorf("%s: got %v (err %v); want %v", st.name, got, err, st.want)
		}
	}
}

func TestWalkerRescansAfterRootChange(t *testing.T) {
	f := newFakeProc(t)
	f.proc(10, 1, 100)
	f.proc(20, 1, 200)
	f.proc(21, 20, 210)
	f.lastPID(21)
	w := newWalker(newProcFS(f.root))
	if _, err := w.tree(procID{PID: 10, Start: 100}, nil); err != nil {
		t.Fatal(err)
	}
	procs, err := w.tree(procID{PID: 20, Start: 200}, nil) // 20 and 21 were foreign
	if err != nil || len(procs) != 2 {
		t.Errorf("got %v, %v; want pids 20 and 21", procs, err)
	}
}
