package demo

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLeakAfter: with LeakAfter, requests leak nothing until the server
// has run that long, then LeakBytes each (the night's leak that starts).
func TestLeakAfter(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		want  uint64
	}{
		{"from the start", 0, 3 * 4096},
		{"not yet", time.Hour, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(Options{LeakBytes: 4096, LeakAfter: tc.after})
			for range 3 {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
				if rec.Code != http.StatusOK {
					t.Fatalf("GET /: status %d; want 200", rec.Code)
				}
			}
			if got := s.leak.Leaked(); got != tc.want {
				t.Errorf("leaked %d bytes after 3 requests; want %d", got, tc.want)
			}
		})
	}
	s := NewServer(Options{LeakBytes: 4096, LeakAfter: time.Hour})
	s.started = time.Now().Add(-2 * time.Hour) // the hour has passed
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if got := s.leak.Leaked(); got != 4096 {
		t.Errorf("leaked %d bytes once LeakAfter passed; want 4096", got)
	}
}
