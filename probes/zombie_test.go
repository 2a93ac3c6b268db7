package probes

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestStatOfCountsAZombieAsGone: a zombie (state Z) or a dead process
// (X) has exited; only its parent's wait keeps its entry. The orphan
// check and the group kill read it as gone, at once, from a fixture
// /proc: not after a long wait for a real zombie.
func TestStatOfCountsAZombieAsGone(t *testing.T) {
	root := t.TempDir()
	for pid, state := range map[int]byte{101: 'Z', 102: 'X', 103: 'S', 104: 'R'} {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%d (srv (x)) %c 1 %d %d 0 -1 4194560 0 0 0 0 1 2 0 0 20 0 1 0 %d 1000 100 0\n", pid, state, pid, pid, 5000+pid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs := newProcFS(root)
	for pid, alive := range map[int32]bool{101: false, 102: false, 103: true, 104: true} {
		st, err := statOf(fs, pid)
		if (err == nil) != alive {
			t.Errorf("pid %d: statOf err = %v; want alive %v", pid, err, alive)
		}
		if alive && st.StartTime != uint64(5000+pid) {
			t.Errorf("pid %d: start time %d; want %d", pid, st.StartTime, 5000+pid)
		}
	}
	ids := []procID{{PID: 101, Start: 5101}, {PID: 102, Start: 5102}}
	if anyAlive(fs, ids) {
		t.Errorf("anyAlive counted a zombie and a dead process as alive")
	}
	if !anyAlive(fs, append(ids, procID{PID: 103, Start: 5103})) {
		t.Errorf("anyAlive missed a sleeping process")
	}
	if anyAlive(fs, []procID{{PID: 103, Start: 1}}) {
		t.Errorf("anyAlive took another process with the same PID (a different start time) for the listed one")
	}
}
