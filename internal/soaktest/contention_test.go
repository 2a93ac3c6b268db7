package soaktest

import (
	"syscall"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in        string
		run, wait time.Duration
		err       bool
	}{
		{"123 456 7\n", 123, 456, false},
		{"5 6", 5, 6, false},
		{"5", 0, 0, true},
		{"a 6 1", 0, 0, true},
	} {
		run, wait, err := parseSchedstat(tc.in)
		if (err != nil) != tc.err || run != tc.run || wait != tc.wait {
			t.Errorf("parseSchedstat(%q) = %d, %d, %v; want %d, %d, error %v", tc.in, run, wait, err, tc.run, tc.wait, tc.err)
		}
	}
}

// SelfCPU's run time advances by about the CPU time the process used
// between two readings (getrusage), however long it waited for a core.
func TestSelfCPUAdvances(t *testing.T) {
	before, ok := SelfCPU()
	if !ok {
		t.Skip("no /proc/self/task/*/schedstat on this kernel")
	}
	start := processCPU(t)
	var spent time.Duration
	for spent < 50*time.Millisecond {
		spent = processCPU(t) - start
	}
	after, _ := SelfCPU()
	// rusage may count in clock ticks: ask for half.
	if d := after.Sub(before); d.Run < spent/2 {
		t.Errorf("run time advanced %s (%s); want about the %s of CPU the process used", d.Run.Round(time.Millisecond), d, spent)
	}
}

// processCPU is this process's user and system time (getrusage).
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
