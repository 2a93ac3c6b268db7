package web

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/soakd/soakd/soak/model"
)

// WriteReportFile writes the run page to dir/report.html, through a
// temporary file renamed into place, so that a reader never sees half a
// page.
func WriteReportFile(dir string, rep *model.Report, opt PageOptions) error {
	return writeHTMLFile(dir, func(w io.Writer) error { return RunReport(w, rep, opt) })
}

// writeHTMLFile writes dir/report.html atomically: a temporary file of
// page's output, made readable and renamed over it.
func writeHTMLFile(dir string, page func(io.Writer) error) error {
	f, err := os.CreateTemp(dir, ".report-*.html")
	if err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	w := bufio.NewWriter(f)
	err = page(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, "report.html"))
	}
	if err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return nil
}
