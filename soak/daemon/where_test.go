package daemon

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// The leak alert's description starts with where the memory grows, and
// reaches the receiver with it.
func TestLeakAlertDescriptionSaysWhere(t *testing.T) {
	e := newEvidenceHub(t)
	rep := memReport(verdict.Leak)
	rss := rep.Resources["rss"]
	rss.Sites = []verdict.Site{{Site: "main.leak (main.go:42)", Kind: "go-heap", PerRequest: 1024, Share: 1}}
	rep.Resources["rss"] = rss
	e.finalRun(1, rep)
	waitFor(t, 30*time.Second, "the leak delivered", func() bool { return e.received(alerts.AlertLeak, alerts.StatusFiring) > 0 })
	a, _ := e.hook.find(alerts.AlertLeak, alerts.StatusFiring)
	d := a.Annotations[alerts.AnnotationDescription]
	if top, _, _ := strings.Cut(d, "\n"); top != "rss grows at main.leak (main.go:42): 1 KiB/request (100 %)" {
		t.Errorf("description %q; want the top site on its first line", d)
	}
}

// A stored run's evidence is served for download; another name is a 404.
func TestEvidenceIsServed(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id, err := st.CreateRun("web", store.TriggerAPI, "pid 1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rep := &model.Report{Verdict: verdict.Leak, Where: &model.Where{Evidence: []model.EvidenceFile{{Name: "smaps.jsonl", Kind: "smaps", Bytes: 3, Data: []byte("{}\n")}}}}
	if err := st.FinishRun(id, store.StatusCompleted, rep, nil); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{st: st}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/runs/{id}/evidence/{name}", d.handleEvidence)
	for _, tc := range []struct {
		name string
		code int
	}{{"smaps.jsonl", 200}, {"heap-end.pb.gz", 404}} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", evidenceBase(id)+tc.name, nil))
		if w.Code != tc.code {
			t.Errorf("%s: status %d; want %d (%s)", tc.name, w.Code, tc.code, w.Body)
		}
		if tc.code == 200 && (w.Body.String() != "{}\n" || !strings.Contains(w.Header().Get("Content-Disposition"), "attachment")) {
			t.Errorf("%s: body %q, disposition %q; want the file as a download", tc.name, w.Body, w.Header().Get("Content-Disposition"))
		}
	}
}
