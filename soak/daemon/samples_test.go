package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// TestSamplesStreamed checks that the samples API, which streams a run a
// chunk at a time, answers exactly what encoding the whole run at once
// gives, in both formats, for runs of no sample, of less than a chunk and
// of several chunks.
func TestSamplesStreamed(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := &Daemon{st: st, log: zaptest.NewLogger(t)}
	recs := syntheticRecords(2*samplesChunk + 7)
	for _, n := range []int{0, 3, len(recs)} {
		id, err := st.CreateRun("web", store.TriggerAPI, "pid 42", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[:n] {
			if err := st.AppendSample(id, r); err != nil {
				t.Fatal(err)
			}
		}
		all, err := st.Samples(id)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, err := json.MarshalIndent(all, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		wantJSON = append(wantJSON, '\n')
		var wantCSV bytes.Buffer
		if err := model.WriteCSV(&wantCSV, all); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			query, ctype string
			want         []byte
		}{{"", "application/json", wantJSON}, {"?format=csv", "text/csv; charset=utf-8", wantCSV.Bytes()}} {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/runs/"+strconv.FormatInt(id, 10)+"/samples"+c.query, nil)
			req.SetPathValue("id", strconv.FormatInt(id, 10))
			rec := httptest.NewRecorder()
			d.handleSamples(rec, req)
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != c.ctype {
				t.Errorf("%d samples%s: status %d, type %q; want 200, %q", n, c.query, rec.Code, rec.Header().Get("Content-Type"), c.ctype)
			}
			if got := rec.Body.Bytes(); !bytes.Equal(got, c.want) {
				t.Errorf("%d samples%s: %d bytes differ from the whole run encoded at once (%d bytes)", n, c.query, len(got), len(c.want))
			}
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/runs/999/samples", nil)
	req.SetPathValue("id", "999")
	rec := httptest.NewRecorder()
	d.handleSamples(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Errorf("run 999: status %d; want 404", rec.Code)
	}
}
