package probes

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHostMemory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte("MemTotal:       16318412 kB\nMemFree:         1234 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := HostMemory(dir); err != nil || got != 16318412<<10 {
		t.Errorf("HostMemory = %d, %v; want %d", got, err, uint64(16318412)<<10)
	}
	if got, err := HostMemory("/proc"); err != nil || got < 64<<20 {
		t.Errorf("HostMemory(/proc) = %d, %v; want the machine's RAM", got, err)
	}
}
