package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/soakd/soakd/soak/verdict"
)

// CrossRunFile is the cross-run evidence's file, beside the store.
const CrossRunFile = "crossrun.json"

// crossRunVersion is the version of CrossRunFile's format this package
// writes; a file of another version is not read (the evidence starts
// empty, and the next run writes this version).
const crossRunVersion = 1

// CrossRun is the cross-run evidence of each job (by job name): the
// earlier runs of the one process it soaked last, by resource (see
// verdict.Earlier). soakd writes it after each run and reads it at
// start-up, so that a restart of soakd changes no verdict.
type CrossRun map[string]CrossRunJob

// CrossRunJob is one job's evidence: the process, by PID and start time
// (clock ticks since boot), and its earlier runs' evidence by resource.
type CrossRunJob struct {
	PID       int32
	Start     uint64
	Resources map[string]verdict.Earlier
}

// The file's format. A point is [requests, seconds, value, phase]: the
// joined soaks run to thousands of points a resource.
type (
	crossRunFile struct {
		Version int                     `json:"version"`
		Jobs    map[string]crossRunProc `json:"jobs"`
	}
	crossRunProc struct {
		PID       int32                       `json:"pid"`
		Start     uint64                      `json:"start_ticks"`
		Resources map[string]crossRunResource `json:"resources"`
	}
	crossRunResource struct {
		Level   float64      `json:"level"`
		LeakRun int64        `json:"leak_run,omitempty"`
		Process string       `json:"process"`
		Runs    int          `json:"runs"`
		Points  [][4]float64 `json:"points,omitempty"`
	}
)

func (s *Store) crossRunPath() string { return filepath.Join(s.dir, CrossRunFile) }

// SaveCrossRun replaces the stored cross-run evidence with c, atomically:
// a crash leaves the old file or the new one, never a part.
func (s *Store) SaveCrossRun(c CrossRun) error {
	f := crossRunFile{Version: crossRunVersion, Jobs: make(map[string]crossRunProc, len(c))}
	for job, j := range c {
		p := crossRunProc{PID: j.PID, Start: j.Start, Resources: make(map[string]crossRunResource, len(j.Resources))}
		for name, e := range j.Resources {
			r := crossRunResource{Level: e.Level, LeakRun: e.LeakRun, Process: e.Process, Runs: e.Runs}
			for _, pt := range e.Points {
				r.Points = append(r.Points, [4]float64{pt.Requests, pt.Seconds, pt.Value, float64(pt.Phase)})
			}
			p.Resources[name] = r
		}
		f.Jobs[job] = p
	}
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("store: encoding the cross-run evidence: %w", err)
	}
	if err := writeAtomic(s.crossRunPath(), b); err != nil {
		return fmt.Errorf("store: saving the cross-run evidence: %w", err)
	}
	return nil
}

// CrossRun returns the stored cross-run evidence; none (and no error)
// when there is no file. A file that cannot be read or decoded, or of
// another version, gives an error naming it, with what it holds left
// out: the caller starts with no evidence.
func (s *Store) CrossRun() (CrossRun, error) {
	path := s.crossRunPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return CrossRun{}, nil
	}
	if err != nil {
		return CrossRun{}, fmt.Errorf("store: reading the cross-run evidence: %w", err)
	}
	var f crossRunFile
	if err := json.Unmarshal(b, &f); err != nil {
		return CrossRun{}, fmt.Errorf("store: %s is corrupt (%v): the earlier runs' evidence starts empty, and the next run rewrites it", path, err)
	}
	if f.Version != crossRunVersion {
		return CrossRun{}, fmt.Errorf("store: %s has format version %d, this soakd reads %d: the earlier runs' evidence starts empty, and the next run rewrites it", path, f.Version, crossRunVersion)
	}
	out := make(CrossRun, len(f.Jobs))
	for job, p := range f.Jobs {
		j := CrossRunJob{PID: p.PID, Start: p.Start, Resources: make(map[string]verdict.Earlier, len(p.Resources))}
		for name, r := range p.Resources {
			e := verdict.Earlier{Level: r.Level, LeakRun: r.LeakRun, Process: r.Process, Runs: r.Runs}
			for _, pt := range r.Points {
				e.Points = append(e.Points, verdict.Point{Requests: pt[0], Seconds: pt[1], Value: pt[2], Phase: verdict.Phase(pt[3])})
			}
			j.Resources[name] = e
		}
		out[job] = j
	}
	return out, nil
}
