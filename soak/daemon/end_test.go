package daemon

import (
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
