package web

import (
	"testing"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func TestFitIsDrawnOnlyOverTheFittedIncarnation(t *testing.T) {
	rec := func(inc int, req uint64) model.Record {
		return model.Record{Sample: probes.Sample{Alive: true, Incarnation: inc}, Requests: req, Phase: verdict.Soak}
	}
	// Incarnation 1 soaks 1000 requests, then a restart; incarnation 2
	// soaks 5000: the verdict fits incarnation 2.
	recs := []model.Record{rec(1, 0), rec(1, 1000), rec(2, 1100), rec(2, 6100)}
	got := fittedSegment(soakSegments(recs))
	if len(got) != 1 || got[0].first.Incarnation != 2 || got[0].first.Requests != 1100 || got[0].last.Requests != 6100 {
		t.Errorf("fitted segment = %+v; want incarnation 2, requests 1100–6100", got)
	}
	if one := fittedSegment(soakSegments(recs[:2])); len(one) != 1 || one[0].first.Incarnation != 1 {
		t.Errorf("without a restart: %+v; want the one segment", one)
	}
}
