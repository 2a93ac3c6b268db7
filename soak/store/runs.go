package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/soakd/soakd/soak/model"
)

// A run's directory, runsDir/ID, holds these files.
const (
	runsDir        = "runs"
	runFile        = "run.json"        // runRecord, replaced atomically
	reportFile     = "report.json"     // the report, once the run has one
	comparisonFile = "comparison.json" // comparisonRecord
	samplesFile    = "samples"         // the samples, framed (see samples.go)
	lastIDFile     = "last_id"         // the last run ID handed out, so that none is reused
	deletedPrefix  = ".deleted-"       // a pruned run's directory, renamed before its removal
)

// runRecord is run.json.
type runRecord struct {
	ID            int64   `json:"id"`
	Job           string  `json:"job"`
	Status        string  `json:"status"`
	Trigger       string  `json:"trigger"`
	Target        string  `json:"target"`
	StartedNs     int64   `json:"started_ns"`
	EndedNs       int64   `json:"ended_ns"`
	Verdict       string  `json:"verdict"`
	Requests      uint64  `json:"requests"`
	RSSPerRequest float64 `json:"rss_per_request"`
	Error         string  `json:"error"`
}

func (r runRecord) run() Run {
	out := Run{ID: r.ID, Job: r.Job, Status: r.Status, Trigger: r.Trigger, Target: r.Target,
		Started: time.Unix(0, r.StartedNs), Verdict: r.Verdict, Requests: r.Requests,
		RSSPerRequest: r.RSSPerRequest, Error: r.Error}
	if r.EndedNs != 0 {
		out.Ended = time.Unix(0, r.EndedNs)
	}
	return out
}

func (s *Store) runDir(id int64) string {
	return filepath.Join(s.root, runsDir, strconv.FormatInt(id, 10))
}

// CreateRun records a new run in status "running" and returns its ID.
// IDs are never reused, even after a prune.
func (s *Store) CreateRun(job, trigger, target string, started time.Time) (int64, error) {
	var id int64
	err := s.locked(func() error {
		var err error
		if id, err = s.nextID(); err != nil {
			return err
		}
		if err := os.Mkdir(s.runDir(id), 0o700); err != nil {
			return err
		}
		return s.writeRun(runRecord{ID: id, Job: job, Status: StatusRunning, Trigger: trigger, Target: target, StartedNs: started.UnixNano()})
	})
	if err != nil {
		return 0, fmt.Errorf("store: creating a run of %s: %w", job, err)
	}
	return id, nil
}

// nextID hands out the next run ID: one above the last handed out and
// above every run's. Call it locked.
func (s *Store) nextID() (int64, error) {
	path := filepath.Join(s.root, lastIDFile)
	var last int64
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if last, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return 0, fmt.Errorf("%s holds %q, not a run ID", path, b)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return 0, err
	}
	ids, err := s.runIDs()
	if err != nil {
		return 0, err
	}
	if len(ids) > 0 {
		last = max(last, ids[len(ids)-1])
	}
	if err := writeAtomic(path, []byte(strconv.FormatInt(last+1, 10)+"\n")); err != nil {
		return 0, err
	}
	return last + 1, nil
}

// runIDs lists the runs' IDs, lowest first.
func (s *Store) runIDs() ([]int64, error) {
	ents, err := os.ReadDir(filepath.Join(s.root, runsDir))
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		if id, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && e.IsDir() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (s *Store) writeRun(r runRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(s.runDir(r.ID), runFile), b)
}

// readRun reads run.json; an error wrapping ErrNotFound when the run does
// not exist (or is being created or pruned).
func (s *Store) readRun(id int64) (runRecord, error) {
	var r runRecord
	b, err := os.ReadFile(filepath.Join(s.runDir(id), runFile))
	if errors.Is(err, fs.ErrNotExist) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(s.runDir(id), runFile), err)
	}
	return r, nil
}

// FinishRun ends a run: its status, the report as JSON, its verdict,
// request count and RSS slope per request, and the error that ended it, if
// any. rep may be nil (the run failed before it had one). The end time is
// the report's, else now. A report that cannot be encoded (a NaN) is left
// out, with why in the run's error, and the run is still ended; the
// encoding error is returned.
func (s *Store) FinishRun(runID int64, status string, rep *model.Report, runErr error) error {
	switch status {
	case StatusCompleted, StatusFailed, StatusStopped, StatusInterrupted:
	default:
		return fmt.Errorf("store: finishing run %d: status %q is not completed, failed, stopped or interrupted", runID, status)
	}
	f := finish{status: status, ended: time.Now()}
	if runErr != nil {
		f.errText = runErr.Error()
	}
	var encErr error
	if rep != nil {
		if err := f.fromReport(rep); err != nil {
			encErr = fmt.Errorf("store: finishing run %d: %w", runID, err)
			f = finish{status: status, ended: f.ended, errText: joinText(f.errText, "the report was not stored: "+err.Error())}
		}
	}
	s.closeSamples(runID)
	if err := s.locked(func() error { return s.finish(runID, f) }); err != nil {
		return fmt.Errorf("store: finishing run %d: %w", runID, err)
	}
	if err := s.saveEvidence(runID, rep); err != nil && encErr == nil {
		return err
	}
	return encErr
}

// finish writes the report (or removes an old one), then the run's new
// state: a crash in between leaves a run that MarkInterrupted finds.
func (s *Store) finish(id int64, f finish) error {
	r, err := s.readRun(id)
	if err != nil {
		return err
	}
	path := filepath.Join(s.runDir(id), reportFile)
	if f.report != nil {
		err = writeAtomic(path, f.report)
	} else if err = os.Remove(path); errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return err
	}
	r.Status, r.EndedNs, r.Verdict, r.Requests, r.RSSPerRequest, r.Error =
		f.status, f.ended.UnixNano(), f.verdict, f.requests, f.rssPerRequest, f.errText
	return s.writeRun(r)
}

// joinText joins two error texts with "; ", either of which may be empty.
func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// finish is the update of FinishRun.
type finish struct {
	status, verdict, errText string
	ended                    time.Time
	requests                 uint64
	rssPerRequest            float64
	report                   []byte
}

func (f *finish) fromReport(rep *model.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	f.report, f.verdict = b, rep.Verdict
	if !rep.Ended.IsZero() {
		f.ended = rep.Ended
	}
	switch {
	case rep.Load != nil:
		f.requests = rep.Load.Requests
	case len(rep.Records) > 0:
		f.requests = rep.Records[len(rep.Records)-1].Requests
	}
	if r, ok := rep.Resources["rss"]; ok {
		f.rssPerRequest = r.PerRequest
	}
	return nil
}

// Run returns one run; ErrNotFound when there is none with that ID.
func (s *Store) Run(id int64) (Run, error) {
	r, err := s.readRun(id)
	if err != nil {
		return Run{}, fmt.Errorf("store: run %d: %w", id, err)
	}
	return r.run(), nil
}

// Runs returns the newest runs first, of one job or of all when job is "",
// at most limit of them (limit <= 0: all).
func (s *Store) Runs(job string, limit int) ([]Run, error) {
	runs := []Run{}
	err := s.eachRun(func(r runRecord) bool {
		if job == "" || r.Job == job {
			runs = append(runs, r.run())
		}
		return limit <= 0 || len(runs) < limit
	})
	if err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	return runs, nil
}

// eachRun calls fn with each run, newest first, until fn returns false.
// A run created or pruned meanwhile is skipped.
func (s *Store) eachRun(fn func(runRecord) bool) error {
	ids, err := s.runIDs()
	if err != nil {
		return err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		r, err := s.readRun(ids[i])
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !fn(r) {
			return nil
		}
	}
	return nil
}

// ReportJSON returns the stored report of a run; ErrNotFound when the run
// does not exist or has no report yet.
func (s *Store) ReportJSON(id int64) ([]byte, error) {
	if _, err := s.readRun(id); err != nil {
		return nil, fmt.Errorf("store: run %d: %w", id, err)
	}
	b, err := os.ReadFile(filepath.Join(s.runDir(id), reportFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("store: run %d has no report yet: %w", id, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: report of run %d: %w", id, err)
	}
	return b, nil
}

// MarkInterrupted marks the runs that a crash left "running" as
// "interrupted" and returns their IDs, oldest first, with those of
// interrupted runs never finished (a crash or an error while they were
// being analysed), so that no run stays without a report. Call it at
// start-up, before any run starts; then analyse each over its samples and
// FinishRun it.
func (s *Store) MarkInterrupted() ([]int64, error) {
	var ids []int64
	err := s.locked(func() error {
		var werr error
		err := s.eachRun(func(r runRecord) bool {
			if r.Status != StatusRunning && (r.Status != StatusInterrupted || r.EndedNs != 0) {
				return true
			}
			r.Status = StatusInterrupted
			if werr = s.writeRun(r); werr != nil {
				return false
			}
			ids = append(ids, r.ID)
			return true
		})
		return errors.Join(err, werr)
	})
	if err != nil {
		return nil, fmt.Errorf("store: marking interrupted runs: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// Prune deletes finished runs, with their samples, that started before
// now-maxAge or that are beyond the newest maxRunsPerJob of their job,
// except a job's pinned baseline. A zero bound is no bound. Running runs
// are never deleted. It returns the number of runs deleted. Each run's
// directory is renamed away and then removed, so that a crash leaves a
// run whole or gone.
func (s *Store) Prune(now time.Time, maxAge time.Duration, maxRunsPerJob int) (int, error) {
	ids, err := s.prunable(now, maxAge, maxRunsPerJob)
	if err != nil {
		return 0, fmt.Errorf("store: prune: %w", err)
	}
	for i, id := range ids {
		if err := s.deleteRun(id); err != nil {
			return i, fmt.Errorf("store: prune: run %d: %w", id, err)
		}
	}
	return len(ids), nil
}

func (s *Store) prunable(now time.Time, maxAge time.Duration, maxRunsPerJob int) ([]int64, error) {
	cutoff := int64(-1 << 63)
	if maxAge > 0 {
		cutoff = now.Add(-maxAge).UnixNano()
	}
	pinned := map[int64]bool{}
	bl, err := s.baselines()
	if err != nil {
		return nil, err
	}
	for _, b := range bl {
		if b.Pinned {
			pinned[b.RunID] = true
		}
	}
	perJob := map[string]int{}
	var ids []int64
	err = s.eachRun(func(r runRecord) bool {
		perJob[r.Job]++
		if r.Status != StatusRunning && !pinned[r.ID] &&
			(r.StartedNs < cutoff || (maxRunsPerJob > 0 && perJob[r.Job] > maxRunsPerJob)) {
			ids = append(ids, r.ID)
		}
		return true
	})
	slices.Sort(ids)
	return ids, err
}

// deleteRun removes a finished run with its baseline entry, comparison,
// samples and evidence.
func (s *Store) deleteRun(id int64) error {
	err := s.locked(func() error {
		r, err := s.readRun(id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil || r.Status == StatusRunning {
			return err
		}
		if err := s.dropBaselineRun(id); err != nil {
			return err
		}
		gone := filepath.Join(s.root, runsDir, deletedPrefix+strconv.FormatInt(id, 10))
		if err := os.Rename(s.runDir(id), gone); err != nil {
			return err
		}
		return os.RemoveAll(gone)
	})
	if err != nil {
		return err
	}
	return s.deleteEvidence(id)
}

// removeDeleted finishes the removal of runs a crash left renamed away.
func (s *Store) removeDeleted() {
	dir := filepath.Join(s.root, runsDir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), deletedPrefix) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
