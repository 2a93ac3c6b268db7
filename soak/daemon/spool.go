package daemon

import (
	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/store"
)

// storeSpool is a run's spool in the store: runner.Run stores every sample
// as it is taken (so a kill -9 loses at most one) and reads the full
// series back from the store for the final analysis. The daemon holds no
// copy of the series beside it, only the live analysis's reservoir.
type storeSpool struct {
	st *store.Store
	id int64
}

func (s storeSpool) Append(r model.Record) error { return s.st.AppendSample(s.id, r) }

func (s storeSpool) Records() ([]model.Record, error) { return s.st.Samples(s.id) }

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
	return runner.NewReport(recs, nil, ti, ao)
}
