package model

import (
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// Rates gives the increments per request between readings, none without
// requests between them, across a reset or across a restart, and the
// rate's resolution over the median requests between readings.
func TestRates(t *testing.T) {
	pts := []verdict.Point{
		{Requests: 0, Value: 0, Incarnation: 1},
		{Requests: 2, Value: 10, Incarnation: 1, Seconds: 7},
		{Requests: 4, Value: 30, Incarnation: 1},
		{Requests: 4, Value: 30, Incarnation: 1}, // no request: the cool-down
		{Requests: 5, Value: 3, Incarnation: 1},  // reset
		{Requests: 7, Value: 5, Incarnation: 2},  // restart
		{Requests: 9, Value: 9, Incarnation: 2},
	}
	got, q := Rates(pts, 1)
	want := []float64{5, 10, 2}
	if len(got) != len(want) {
		t.Fatalf("got %d rates %v; want %v", len(got), got, want)
	}
	for i, w := range want {
		if got[i].Value != w {
			t.Errorf("rate %d = %g; want %g", i, got[i].Value, w)
		}
	}
	if got[0].Requests != 2 || got[0].Seconds != 7 {
		t.Errorf("rate 0 at %+v; want the later reading's requests and time", got[0])
	}
	if q != 0.5 {
		t.Errorf("quantum = %g; want 1 over the median 2 requests between readings", q)
	}
}
