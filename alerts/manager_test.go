package alerts

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestManagerDedupRepeatResolve(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	sink := &recSink{name: "rec"}
	m, _ := newTestManager(t, ManagerOptions{
		Now: clock.Now, RepeatInterval: 4 * time.Hour, RepeatCheck: time.Hour,
		ExternalURL: "http://soakhost:7797/",
	}, sink)
	start := clock.Now()

	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "first send", func() bool { return len(sink.batches()) == 1 })

	steps := []struct {
		name    string
		advance time.Duration
		act     func()
		want    int // batches sent so far
	}{
		{"refire within repeat is deduplicated", time.Hour, func() { m.Fire(LeakAlert(testLeak("web", "rss"))) }, 1},
		{"Repeat before due sends nothing", time.Hour, m.Repeat, 1},
		{"refire once due is re-sent", 2 * time.Hour, func() { m.Fire(LeakAlert(testLeak("web", "rss"))) }, 2},
		{"Repeat once due re-sends", 4 * time.Hour, m.Repeat, 3},
		{"resolve sends once", time.Minute, func() { m.Resolve("web", "rss") }, 4},
		{"resolve again sends nothing", time.Minute, func() { m.Resolve("web", "rss") }, 4},
	}
	for _, s := range steps {
		clock.Add(s.advance)
		s.act()
		// Flush: a marker alert on another job is sent after any batch
		// the step queued.
		marker := RunFailedAlert("marker-"+s.name, "", "x")
		m.Fire(marker)
		waitFor(t, s.name, func() bool { return countJob(sink.batches(), "marker-"+s.name) == 1 })
		if got := len(sink.batches()) - markers(sink.batches()); got != s.want {
			t.Fatalf("%s: got %d sends; want %d", s.name, got, s.want)
		}
	}
	sent := nonMarkers(sink.batches())
	first, last := sent[0][0], sent[len(sent)-1][0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"first status", first.Status, StatusFiring},
		{"first startsAt", first.StartsAt, start},
		{"first endsAt (expiry)", first.EndsAt, start.Add(8 * time.Hour)},
		{"generatorURL", first.GeneratorURL, "http://soakhost:7797/api/v1/runs/42"},
		{"per_request", first.Annotations[AnnotationPerRequest], "4 KiB/request"},
		{"resolved status", last.Status, StatusResolved},
		{"resolved startsAt kept", last.StartsAt, start},
		{"resolved endsAt = now", last.EndsAt, start.Add(8*time.Hour + time.Minute)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, c.got, c.want)
		}
	}
}

func countJob(batches [][]Alert, job string) int {
	n := 0
	for _, b := range batches {
		for _, a := range b {
			if a.Labels[LabelJob] == job {
				n++
			}
		}
	}
	return n
}

func isMarker(b []Alert) bool {
	return len(b) == 1 && len(b[0].Labels[LabelJob]) > 7 && b[0].Labels[LabelJob][:7] == "marker-"
}

func markers(batches [][]Alert) int { return len(batches) - len(nonMarkers(batches)) }

func nonMarkers(batches [][]Alert) [][]Alert {
	var out [][]Alert
	for _, b := range batches {
		if !isMarker(b) {
			out = append(out, b)
		}
	}
	return out
}

func TestManagerResolveMissing(t *testing.T) {
	sink := &recSink{name: "rec"}
	m, _ := newTestManager(t, ManagerOptions{}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	m.Fire(ExhaustionAlert(testLeak("web", "rss")))
	m.Fire(LeakAlert(testLeak("web", "fds")))
	m.Fire(TargetDownAlert("web", "42", "the target exited with status 2"))
	m.Fire(LeakAlert(testLeak("db", "fds")))
	m.ResolveMissing("web", []string{"rss"})
	m.ResolveAlert(AlertLeak, "db", "rss") // not firing: no send
	m.ResolveAlert(AlertExhaustion, "web", "rss")

	var got []string
	for _, a := range m.Active() {
		got = append(got, a.Fingerprint().String())
	}
	want := []string{"SoakdLeak/db/fds", "SoakdLeak/web/rss"}
	if len(got) != len(want) {
		t.Fatalf("active: got %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("active: got %v; want %v", got, want)
		}
	}
	waitFor(t, "5 firing and 3 resolved sends", func() bool { return deliveries(m, "rec", ResultSuccess) == 7 })
	resolved := 0
	for _, b := range sink.batches() {
		for _, a := range b {
			if a.Status == StatusResolved {
				resolved++
			}
		}
	}
	if resolved != 3 {
		t.Errorf("resolved alerts sent: got %d; want 3", resolved)
	}
}

func TestManagerRoute(t *testing.T) {
	a, b := &recSink{name: "a"}, &recSink{name: "b"}
	m, _ := newTestManager(t, ManagerOptions{Route: func(job string) []string {
		if job == "web" {
			return []string{"a", "missing"}
		}
		return []string{"a", "b"}
	}}, a, b)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	m.Fire(LeakAlert(testLeak("db", "rss")))
	waitFor(t, "sends", func() bool { return len(a.batches()) == 2 && len(b.batches()) == 1 })
	if job := b.batches()[0][0].Labels[LabelJob]; job != "db" {
		t.Errorf("sink b got job %q; want db", job)
	}
}

func TestManagerRetries(t *testing.T) {
	cases := []struct {
		name                   string
		fail                   func(n int) (bool, error)
		success, failure, retr int
		attempts               int
	}{
		{"retryable then success", func(n int) (bool, error) {
			if n < 3 {
				return true, errors.New("503")
			}
			return false, nil
		}, 1, 0, 2, 3},
		{"non-retryable fails at once", func(int) (bool, error) { return false, errors.New("400") }, 0, 1, 0, 1},
		{"gives up after max attempts", func(int) (bool, error) { return true, errors.New("down") }, 0, 1, 4, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink := &recSink{name: "s", fail: c.fail}
			m, _ := newTestManager(t, ManagerOptions{}, sink)
			m.Fire(LeakAlert(testLeak("web", "rss")))
			waitFor(t, "an outcome", func() bool {
				return deliveries(m, "s", ResultSuccess)+deliveries(m, "s", ResultFailure) == 1
			})
			got := []int{deliveries(m, "s", ResultSuccess), deliveries(m, "s", ResultFailure),
				deliveries(m, "s", ResultRetry), len(sink.batches())}
			want := []int{c.success, c.failure, c.retr, c.attempts}
			for i, name := range []string{"success", "failure", "retry", "attempts"} {
				if got[i] != want[i] {
					t.Errorf("%s: got %d; want %d", name, got[i], want[i])
				}
			}
		})
	}
}

// blockSink blocks every Send until its context is done or release is
// closed.
type blockSink struct {
	release chan struct{}
}

func (blockSink) Name() string { return "block" }

func (s blockSink) Send(ctx context.Context, _ ...Alert) (bool, error) {
	select {
	case <-ctx.Done():
		return true, ctx.Err()
	case <-s.release:
		return false, nil
	}
}

func TestManagerCloseDeadline(t *testing.T) {
	sink := blockSink{release: make(chan struct{})}
	m, _ := newTestManager(t, ManagerOptions{QueueSize: 4}, sink)
	for _, r := range []string{"a", "b", "c"} {
		m.Fire(LeakAlert(testLeak("web", r)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := m.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: got %v; want DeadlineExceeded", err)
	}
	// At most one send was in flight (failed); the rest were abandoned
	// (dropped).
	failed, dropped := deliveries(m, "block", ResultFailure), deliveries(m, "block", ResultDropped)
	if failed > 1 || failed+dropped != 3 {
		t.Errorf("failed %d, dropped %d; want at most 1 failed and 3 in all", failed, dropped)
	}
	m.Fire(LeakAlert(testLeak("web", "late")))
	if n := len(m.Active()); n != 3 {
		t.Errorf("Fire after Close changed state: %d active; want 3", n)
	}
}

func TestManagerCloseDrains(t *testing.T) {
	sink := &recSink{name: "rec"}
	m, _ := newTestManager(t, ManagerOptions{}, sink)
	for _, r := range []string{"a", "b", "c", "d"} {
		m.Fire(LeakAlert(testLeak("web", r)))
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := len(sink.batches()); got != 4 {
		t.Errorf("sent before Close returned: got %d; want 4", got)
	}
}

func TestQueueDropsOldest(t *testing.T) {
	q := newQueue(2)
	var dropped int
	for _, r := range []string{"a", "b", "c"} {
		dropped += q.push([]Alert{{Labels: map[string]string{LabelResource: r}}})
	}
	if dropped != 1 || q.len() != 2 {
		t.Fatalf("got dropped %d, len %d; want 1, 2", dropped, q.len())
	}
	b, _ := q.pop(context.Background())
	if r := b[0].Labels[LabelResource]; r != "b" {
		t.Errorf("oldest kept: got %q; want b", r)
	}
}
