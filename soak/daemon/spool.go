package daemon

import (
	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/model"
)

// storeSpool is a run's spool in the store: runner.Run stores every sample
// as it is taken (so a kill -9 loses at most one) and reads the full
// series back from the store for the final analysis. The daemon holds no
// copy of the series beside it, only the live analysis's reservoir.
//
// A sample the store refuses stops the run (activeRun.failStore): without
// its samples on disk a crash would lose it, and a full disk only gets
// fuller.
type storeSpool struct {
	d  *Daemon
	ar *activeRun
}

func (s storeSpool) Append(r model.Record) error {
	err := s.d.st.AppendSample(s.ar.id, r)
	if !s.d.wrote("sample", err) {
		s.ar.failStore(err)
	}
	return err
}

func (s storeSpool) Records() ([]model.Record, error) { return s.d.st.Samples(s.ar.id) }

// analyzeStored analyses a run's samples as stored, when runner.Run gave no
// report (it failed after sampling), with the run's own analysis options.
func (d *Daemon) analyzeStored(ar *activeRun) *model.Report {
	recs, err := d.st.Samples(ar.id)
	if err != nil || len(recs) == 0 {
		if err != nil {
			ar.log.Warn("reading the run's samples for its analysis: analysing the live reservoir instead", zap.Error(err))
		}
		return ar.analyze()
	}
	ar.mu.Lock()
	ti, ao := ar.ti, ar.ao
	ar.mu.Unlock()
	if ti.Probed {
		ti.Description = ar.describe(recs)
	}
	return analysis.NewReport(recs, nil, ti, ao)
}
