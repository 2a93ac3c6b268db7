package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// exportFlags are the flags of `soakd export`.
type exportFlags struct {
	csv, json bool
	stateDir  string
	config    string
	out       string
}

func newExportFlagSet(f *exportFlags, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("export", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.BoolVar(&f.csv, "csv", false, "write the run's samples as CSV, one row per sample (the default)")
	fs.BoolVar(&f.json, "json", false, "write the run's report as JSON")
	fs.StringVar(&f.stateDir, "state-dir", "", "the daemon's state directory (default: the config's state_dir, else "+config.DefaultStateDir+")")
	fs.StringVar(&f.config, "config", "", "take the state directory from this config file")
	fs.StringVarP(&f.out, "output", "o", "", "write to this file instead of stdout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: soakd export RUN_ID [--csv | --json] [--state-dir DIR] [-o FILE]\n\nWrite a stored run's samples as CSV (for gnuplot or pandas; units in the\ncolumn names) or its report as JSON.\n\nFlags:")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	return fs
}

// cmdExport is `soakd export RUN_ID`.
func cmdExport(args []string, stdout, stderr io.Writer) int {
	var f exportFlags
	fs := newExportFlagSet(&f, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "soakd export: %v\n", err)
		return exitUsage
	}
	id, err := f.check(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "soakd export:", err)
		return exitUsage
	}
	if err := f.export(id, stdout); err != nil {
		fmt.Fprintln(stderr, "soakd export:", err)
		return exitUsage
	}
	return exitOK
}

// check validates the arguments and settles the state directory.
func (f *exportFlags) check(args []string) (int64, error) {
	if len(args) != 1 {
		return 0, errors.New("want one RUN_ID, e.g. soakd export 42 --csv")
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("RUN_ID %q: want a run number such as 42 (see GET /api/v1/runs)", args[0])
	}
	if f.csv && f.json {
		return 0, errors.New("give --csv or --json, not both")
	}
	if f.stateDir == "" && f.config != "" {
		cfg, err := config.Load(f.config)
		if err != nil {
			return 0, err
		}
		f.stateDir = cfg.StateDir
	}
	if f.stateDir == "" {
		f.stateDir = config.DefaultStateDir
	}
	return id, nil
}

func (f *exportFlags) export(id int64, stdout io.Writer) error {
	db := filepath.Join(f.stateDir, store.FileName)
	if _, err := os.Stat(db); err != nil {
		if _, lerr := os.Stat(filepath.Join(f.stateDir, store.LegacyFileName)); lerr == nil {
			return openLegacy(f.stateDir) // store.Open says what to do with it
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("no run store at %s: %w (set --state-dir or --config)", db, err)
	}
	s, err := store.Open(f.stateDir)
	if err != nil {
		return err
	}
	defer s.Close()
	var buf bytes.Buffer
	if f.json {
		err = writeReportJSON(&buf, s, id)
	} else {
		err = writeSamplesCSV(&buf, s, id)
	}
	if err != nil {
		return err
	}
	if f.out == "" {
		_, err = stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(f.out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	return nil
}

// writeSamplesCSV writes the header and one row per sample, as samples.csv,
// decoding a chunk of samples at a time.
func writeSamplesCSV(w io.Writer, s *store.Store, id int64) error {
	rw := model.NewRowWriter(w)
	if err := s.EachSampleChunk(id, 1000, rw.Write); err != nil {
		return err
	}
	return rw.Flush()
}

// writeReportJSON writes the stored report, indented.
func writeReportJSON(w io.Writer, s *store.Store, id int64) error {
	b, err := s.ReportJSON(id)
	if errors.Is(err, store.ErrNotFound) {
		if r, rerr := s.Run(id); rerr == nil {
			return fmt.Errorf("run %d has no report yet (status %s); --csv exports its samples so far", id, r.Status)
		}
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return fmt.Errorf("run %d: stored report: %w", id, err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// openLegacy opens a state directory that holds an older soakd's SQLite
// store only for store.Open's error about it.
func openLegacy(dir string) error {
	s, err := store.Open(dir)
	if err == nil {
		s.Close()
		return fmt.Errorf("no run store in %s (set --state-dir or --config)", dir)
	}
	return err
}
