package analysis

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// counterRecords are a remote run's records, sampled about every 0.5 s
// (seeded jitter), at a throughput that rises from 100 to 140 requests/s
// (as on a machine whose other work eases off), whose extra resource
// name reads total(n) after n requests.
func counterRecords(name string, total func(n float64) float64) []model.Record {
	rng := rand.New(rand.NewPCG(26, 1))
	start := time.Unix(1_700_000_000, 0)
	var recs []model.Record
	t, n := 0.0, 0.0
	for i := range 400 {
		dt := 0.4 + 0.2*rng.Float64()
		t += dt
		n += dt * 100 * (1 + 0.4*float64(i)/400)
		r := model.Record{Elapsed: t, Phase: verdict.Soak, Requests: uint64(n)}
		r.Sample = probes.Sample{Time: start.Add(time.Duration(t * float64(time.Second))), Alive: true, Incarnation: 1,
			Extra: map[string]float64{name: float64(uint64(total(float64(r.Requests))))}}
		recs = append(recs, r)
	}
	return recs
}

// A counter is judged by its rate per request: one that rises steadily
// with the load (3 per request) is no leak, though its rate per second
// rises with the throughput, while the same readings as a gauge are; one
// whose rate itself rises (from 3 per request to about 12) is growth.
func TestRemoteCounterIsJudgedAsARate(t *testing.T) {
	steady := func(n float64) float64 { return 3 * n }
	rising := func(n float64) float64 { return 3*n + 0.0002*n*n }
	for _, tc := range []struct {
		name  string
		total func(float64) float64
		want  string
	}{
		{"handled" + model.CounterSuffix, steady, verdict.Stable},
		{"handled", steady, verdict.Leak}, // a gauge: the level grows
		{"queued" + model.CounterSuffix, rising, verdict.Leak},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := Analyze(counterRecords(tc.name, tc.total), nil, Options{Resources: []string{tc.name}})
			got, ok := res[tc.name]
			if !ok {
				t.Fatalf("no verdict for %s; got %v", tc.name, res)
			}
			if got.Verdict != tc.want {
				t.Errorf("%s: %s (%s); want %s", tc.name, got.Verdict, got.Reason, tc.want)
			}
		})
	}
}
