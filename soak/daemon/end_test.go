package daemon

import (
	"errors"
	"testing"
	"time"
)

// A reader who asks whether a run is live while its outcome is being
// stored waits for the store, so that it never finds live a run whose
// stored status already says it finished (TestScheduledRun once read
// the live report of a run the run list showed completed).
func TestRunEndIsSeenWhole(t *testing.T) {
	ar := &activeRun{}
	storing, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ar.end(func() {
			close(storing)
			<-release
		})
	}()
	<-storing
	seen := make(chan bool)
	go func() { seen <- ar.isEnded() }()
	select {
	case v := <-seen:
		t.Fatalf("isEnded returned %v while the outcome was being stored; want it to wait", v)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if !<-seen {
		t.Error("isEnded = false after the outcome was stored")
	}
	<-done
}

// A start that finds the job's previous run ended (its outcome stored,
// the run list showing it finished) but still evaluating its alerts waits
// for it instead of refusing: TestAlertLifecycle started the next run as
// soon as the list said "completed" and was told "run 1 is still going".
// A run that is still going is refused at once.
func TestStartWaitsForAnEndedRun(t *testing.T) {
	dir := t.TempDir()
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	d := startDaemon(t, parseConfig(t, configYAML(dir, "", jobSpec{name: "web", target: tg})), Options{})
	prev := &activeRun{id: 99, job: "web", cancel: func() {}, released: make(chan struct{})}
	d.mu.Lock()
	d.active["web"] = prev
	d.mu.Unlock()
	d.runs.Add(1)

	var busy *BusyError
	if _, err := d.StartRun("web", TriggerAPI); !errors.As(err, &busy) || busy.RunID != 99 {
		t.Fatalf("StartRun while run 99 goes = %v; want a BusyError naming it", err)
	}

	prev.end(func() {})
	started := make(chan error, 1)
	go func() {
		_, err := d.StartRun("web", TriggerAPI)
		started <- err
	}()
	select {
	case err := <-started:
		t.Fatalf("StartRun returned %v before the ended run gave up the job; want it to wait", err)
	case <-time.After(100 * time.Millisecond):
	}
	d.release(prev)
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("StartRun after the ended run gave up the job: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("StartRun still waits after the ended run gave up the job")
	}
}
