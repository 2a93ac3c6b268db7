package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// answers is what a fuzzed Prometheus says: one body for instant vector
// queries, one for range queries and range-vector selectors.
type answers struct {
	mu              sync.Mutex // guards both
	instant, ranged []byte
}

func (a *answers) set(instant, ranged []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.instant, a.ranged = instant, ranged
}

func (a *answers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	body := a.instant
	if r.URL.Path == "/api/v1/query_range" || strings.Contains(r.FormValue("query"), "[") {
		body = a.ranged
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

const (
	anchorAnswer = `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{"__name__":"process_resident_memory_bytes","job":"api"},"values":[[1700000000,"1"],[1700000015,"2"],[1700000030,"-3"]]}]}}`
	vectorAnswer = `{"status":"success","data":{"resultType":"vector","result":[` +
		`{"metric":{"__name__":"process_resident_memory_bytes","job":"api"},"value":[1700000000.5,"24576"]},` +
		`{"metric":{"__name__":"process_cpu_seconds_total","job":"api"},"value":[1700000000.5,"3.5"]},` +
		`{"metric":{"__name__":"process_start_time_seconds","job":"api"},"value":[1700000000.5,"1.6e9"]}]}}`
	matrixAnswer = `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{"__name__":"process_resident_memory_bytes","job":"api"},"values":[[1700000000,"1"],[1700000015,"2"],[1700000030,"NaN"]]},` +
		`{"metric":{"__name__":"process_cpu_seconds_total","job":"api"},"values":[[1700000000,"1"],[1700000015,"0.5"]]}]}}`
)

// FuzzPromAnswer: whatever a Prometheus server answers to the instant
// and range queries, read by the real client over loopback, the source
// opens or fails without a panic, and its samples come in time order with
// no more of them than the answer has points.
func FuzzPromAnswer(f *testing.F) {
	f.Add([]byte(vectorAnswer), []byte(matrixAnswer))
	f.Add([]byte(vectorAnswer), []byte(anchorAnswer))
	f.Add([]byte(vectorAnswer), []byte(strings.Replace(matrixAnswer, `"0.5"`, `"1e400"`, 1)))
	f.Add([]byte(matrixAnswer), []byte(vectorAnswer))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`), []byte(`{}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1,"1"]}}`), []byte(`null`))
	a := &answers{}
	srv := httptest.NewServer(a)
	f.Cleanup(srv.Close)
	cfg := Config{PrometheusURL: srv.URL, Selector: `{job="api"}`, Timeout: 5 * time.Second}
	f.Fuzz(func(t *testing.T, instant, ranged []byte) {
		a.set(instant, ranged)
		ctx := context.Background()
		p, err := openProm(ctx, cfg, zap.NewNop())
		if err != nil {
			return
		}
		_ = p.Sample()
		end := time.Unix(1_700_000_100, 0)
		ss, err := p.Fetch(ctx, end.Add(-100*time.Second), end)
		if err != nil {
			return
		}
		if len(ss) > len(ranged)/8 {
			t.Fatalf("%d samples from a %d-byte answer", len(ss), len(ranged))
		}
		for i := 1; i < len(ss); i++ {
			if ss[i].Time.Before(ss[i-1].Time) {
				t.Fatalf("sample %d at %v before sample %d at %v", i, ss[i].Time, i-1, ss[i-1].Time)
			}
		}
		_, _ = p.Describe(), p.Notes()
	})
}
