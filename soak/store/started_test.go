package store

import (
	"slices"
	"testing"
)

func TestStarted(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := StartedTarget{PID: 100, StartTicks: 1 << 40, Job: "web", RunID: 1}
	b := StartedTarget{PID: 200, StartTicks: 7, Job: "api", RunID: 2}
	for _, x := range []StartedTarget{b, a, a} {
		if err := s.AddStarted(x); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(dir); err != nil { // survives a restart
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Started()
	if want := []StartedTarget{a, b}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("Started() = %+v, %v; want %+v", got, err, want)
	}
	if err := s.DeleteStarted(1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteStartedTarget(StartedTarget{PID: 200, StartTicks: 8}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Started(); !slices.Equal(got, []StartedTarget{b}) {
		t.Errorf("after deleting run 1 and another start time of pid 200: %+v; want %+v", got, []StartedTarget{b})
	}
	if err := s.DeleteStartedTarget(b); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Started(); len(got) != 0 {
		t.Errorf("after deleting all: %+v; want none", got)
	}
}
