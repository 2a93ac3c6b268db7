package runner

import (
	"os"
	"os/exec"
	"testing"
)

// TestCollectorOf: a Go executable is known by its build information
// (this test's own binary), a JVM and Node by their command names, and a
// C program (sleep) or CPython is none.
func TestCollectorOf(t *testing.T) {
	if got := CollectorOfPID(int32(os.Getpid())); got != "Go" {
		t.Errorf("this Go test binary: %q; want Go", got)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sleep.Process.Kill()
		sleep.Wait()
	})
	if got := CollectorOfPID(int32(sleep.Process.Pid)); got != "" {
		t.Errorf("sleep (C): %q; want none", got)
	}
	for comm, want := range map[string]string{"java": "JVM", "node": "Node", "python3": "", "": ""} {
		if got := collectorOf(0, comm); got != want {
			t.Errorf("comm %q: %q; want %q", comm, got, want)
		}
	}
}
