package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReportFile(t *testing.T) {
	dir := t.TempDir()
	if err := WriteReportFile(dir, loadRun(t, "testdata/run1"), PageOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(string(b)), "</html>") {
		t.Errorf("report.html is not one whole page (%d bytes)", len(b))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries; want only report.html", len(entries))
	}
	if err := WriteReportFile(filepath.Join(dir, "missing"), loadRun(t, "testdata/run1"), PageOptions{}); err == nil {
		t.Errorf("writing into a missing dir: got no error; want one")
	}
}
