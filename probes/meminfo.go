package probes

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// HostMemory returns the host's RAM, MemTotal of procRoot/meminfo, in
// bytes; procRoot is "/proc" but for tests.
func HostMemory(procRoot string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemTotal:" {
			kib, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: MemTotal %q: %w", f[1], err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("meminfo: no MemTotal line")
}
