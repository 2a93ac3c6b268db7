package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashEnv names the state directory for the child of TestKill9; its
// presence makes TestCrashChild write samples until it is killed.
const crashEnv = "SOAKD_STORE_CRASH_DIR"

// TestCrashChild is the child process of TestKill9: it creates a run and
// writes samples forever, printing "wrote N" after each one is committed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("child of TestKill9 only")
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	id, err := s.CreateRun("web", TriggerSchedule, "", time.Now())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("run", id)
	deadline := time.Now().Add(2 * time.Minute) // bounded even if nobody kills us
	for i := 0; time.Now().Before(deadline); i++ {
		if err := s.AppendSample(id, fullRecord(i)); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("wrote", i+1)
	}
	os.Exit(1)
}

// TestKill9 runs a child that writes samples, kills it with SIGKILL in the
// middle, then opens the store: the run is interrupted and every sample
// the child reported written is there.
func TestKill9(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	runID, written := readUntil(t, bufio.NewScanner(out), 50)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	s := openTest(t, dir)
	ids, err := s.MarkInterrupted()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != runID {
		t.Fatalf("MarkInterrupted = %v; want [%d]", ids, runID)
	}
	recs, err := s.Samples(runID)
	if err != nil {
		t.Fatal(err)
	}
	// The child goes on writing while its lines are read, so the store may
	// hold more than were read; none of those read may be missing.
	if len(recs) < written {
		t.Errorf("got %d samples; want at least the %d the child wrote", len(recs), written)
	}
	for i, r := range recs {
		if want := fullRecord(i).Time; !r.Time.Equal(want) {
			t.Fatalf("sample %d time %v; want %v", i, r.Time, want)
		}
	}
}

// readUntil reads the child's lines until it reports at least n samples
// written, and returns the run ID and the last count read.
func readUntil(t *testing.T, sc *bufio.Scanner, n int) (runID int64, written int) {
	t.Helper()
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "run":
			runID, _ = strconv.ParseInt(f[1], 10, 64)
		case len(f) == 2 && f[0] == "wrote":
			written, _ = strconv.Atoi(f[1])
			if written >= n {
				return runID, written
			}
		case len(f) > 0 && f[0] == "error":
			t.Fatalf("child: %s", sc.Text())
		}
	}
	t.Fatalf("child ended after %d samples: %v", written, sc.Err())
	return 0, 0
}
