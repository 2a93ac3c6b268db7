package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/soakd/soakd/soak/model"
)

// Spool holds a run's full series outside memory: Run appends every
// record to it as it is taken and reads the whole series back once, for
// the final analysis. Run itself keeps no series, so its memory does not
// grow with the run's length; only that last read-back holds it.
//
// Without Options.Spool, Run spools to samples.csv and procs.csv: in
// Options.OutDir when it is set, else in a temporary directory removed at
// the end. The daemon spools to its store.
type Spool interface {
	// Append stores one record, with its members.
	Append(model.Record) error
	// Records returns every record appended, in order, with its members.
	Records() ([]model.Record, error)
}

// csvSpool spools to samples.csv and procs.csv in dir, flushed every
// sample (see csvWriter), and reads them back as `soakd analyze` does.
type csvSpool struct {
	dir string
	w   *model.CSVWriter
	tmp bool // dir is a temporary directory, removed by Close
}

// newCSVSpool creates samples.csv and procs.csv in dir, or, when dir is
// empty, in a new temporary directory; samples.csv has a requests_<n>
// column for each of two or more endpoints.
func newCSVSpool(dir string, endpoints int) (*csvSpool, error) {
	s := &csvSpool{dir: dir}
	if dir == "" {
		d, err := os.MkdirTemp("", "soakd-run-")
		if err != nil {
			return nil, fmt.Errorf("a temporary directory for the samples (set TMPDIR, or give --out): %w", err)
		}
		s.dir, s.tmp = d, true
	}
	w, err := model.CreateCSVEndpoints(filepath.Join(s.dir, "samples.csv"), endpoints)
	if err != nil {
		if s.tmp {
			os.RemoveAll(s.dir)
		}
		return nil, err
	}
	s.w = w
	return s, nil
}

func (s *csvSpool) Append(r model.Record) error { return s.w.Write(r) }

// Records reads samples.csv and procs.csv back.
func (s *csvSpool) Records() ([]model.Record, error) {
	f, err := os.Open(filepath.Join(s.dir, "samples.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := model.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("reading back %s: %w", f.Name(), err)
	}
	p, err := os.Open(filepath.Join(s.dir, "procs.csv"))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	rows, err := model.ReadProcsCSV(p)
	if err != nil {
		return nil, fmt.Errorf("reading back %s: %w", p.Name(), err)
	}
	if err := model.AttachMembers(recs, rows); err != nil {
		return nil, fmt.Errorf("reading back %s: %w", p.Name(), err)
	}
	return recs, nil
}

// Close closes the files and removes a temporary directory.
func (s *csvSpool) Close() error {
	err := s.w.Close()
	if s.tmp {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}
