package alerts

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
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
	const rss = "SoakdLeak/web/rss"

	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "first send", func() bool { return len(sentOf(sink.batches(), rss)) == 1 })

	newRun := testLeak("web", "rss")
	newRun.RunID = "43"
	steps := []struct {
		name    string
		advance time.Duration
		act     func()
		want    int // sends of the alert so far
	}{
		{"refire within repeat is deduplicated", time.Hour, func() { m.Fire(LeakAlert(testLeak("web", "rss"))) }, 1},
		{"Repeat before due sends nothing", time.Hour, m.Repeat, 1},
		{"once due it is re-sent", 2 * time.Hour, func() { m.Fire(LeakAlert(testLeak("web", "rss"))) }, 2},
		{"Repeat once due re-sends", 4 * time.Hour, m.Repeat, 3},
		{"a new run is not a new page", time.Minute, func() { m.Fire(LeakAlert(newRun)) }, 3},
		{"resolve sends once", time.Minute, func() { resolveAll(m, "web", "rss") }, 4},
		{"resolve again sends nothing", time.Minute, func() { resolveAll(m, "web", "rss") }, 4},
	}
	for _, s := range steps {
		clock.Add(s.advance)
		s.act()
		// Flush: a new marker alert makes the worker look at what is due
		// after the step, and is sent in the same send or after it.
		marker := RunFailedAlert("marker-"+s.name, "", "x")
		m.Fire(marker)
		waitFor(t, s.name, func() bool { return countJob(sink.batches(), "marker-"+s.name) == 1 })
		if got := len(sentOf(sink.batches(), rss)); got != s.want {
			t.Fatalf("%s: got %d sends; want %d", s.name, got, s.want)
		}
	}
	sent := sentOf(sink.batches(), rss)
	first, last := sent[0], sent[len(sent)-1]
	checks := []struct {
		name      string
		got, want any
	}{
		{"first status", first.Status, StatusFiring},
		{"first startsAt", first.StartsAt, start},
		{"first endsAt (expiry)", first.EndsAt, start.Add(8 * time.Hour)},
		{"generatorURL", first.GeneratorURL, "http://soakhost:7797/runs/42"},
		{"per_request", first.Annotations[AnnotationPerRequest], "4 KiB/request"},
		{"repeat's run", sent[2].Annotations[AnnotationRunID], "42"},
		{"the resolve's run", last.Annotations[AnnotationRunID], "43"},
		{"resolved status", last.Status, StatusResolved},
		{"resolved startsAt kept", last.StartsAt, start},
		{"resolved endsAt = now", last.EndsAt, start.Add(8*time.Hour + 2*time.Minute)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, c.got, c.want)
		}
	}
	if n := len(m.Snapshot()); n != len(steps) {
		t.Errorf("state: %d alerts; want the %d markers (the resolved alert, confirmed, is forgotten)", n, len(steps))
	}
}

// sentOf returns every send of the alert with fingerprint fp, in order.
func sentOf(batches [][]Alert, fp string) []Alert {
	var out []Alert
	for _, b := range batches {
		for _, a := range b {
			if a.Fingerprint().String() == fp {
				out = append(out, a)
			}
		}
	}
	return out
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

// TestResolveWaitsForDelivery: an alert resolved before its sink had it
// (the receiver was down) stays firing until the sink confirms it firing,
// and is resolved then: the receiver sees it fire, then resolve.
func TestResolveWaitsForDelivery(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	var mu sync.Mutex
	var delivered []Status // statuses the receiver accepted, in order
	sink := &recSink{name: "rec"}
	sink.fail = func(n int) (bool, error) {
		if down.Load() {
			return true, errors.New("connection refused")
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range sink.got[n-1] {
			delivered = append(delivered, a.Status)
		}
		return false, nil
	}
	m, _ := newTestManager(t, ManagerOptions{}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	m.ResolveAlert(AlertLeak, "web", "rss")
	if got := m.Active(); len(got) != 1 {
		t.Fatalf("active after a resolve before delivery: %v; want the leak still firing", got)
	}
	if s := m.Snapshot(); len(s) != 1 || !s[0].ResolveOnDelivery {
		t.Errorf("state %+v; want the leak marked resolve_on_delivery", s)
	}
	down.Store(false)
	waitFor(t, "the leak delivered, then resolved", func() bool { return len(m.Active()) == 0 && m.QueueLen("rec") == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != 2 || delivered[0] != StatusFiring || delivered[1] != StatusResolved {
		t.Errorf("the receiver accepted %v; want [firing resolved]", delivered)
	}
}

func TestManagerResolveMissing(t *testing.T) {
	sink := &recSink{name: "rec"}
	m, _ := newTestManager(t, ManagerOptions{}, sink)
	m.Fire(LeakAlert(testLeak("web", "rss")))
	m.Fire(ExhaustionAlert(testLeak("web", "rss")))
	m.Fire(LeakAlert(testLeak("web", "fds")))
	m.Fire(TargetDownAlert("web", "42", "the target exited with status 2"))
	m.Fire(LeakAlert(testLeak("db", "fds")))
	waitFor(t, "the firing alerts delivered", func() bool { return m.QueueLen("rec") == 0 })
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
	waitFor(t, "every send confirmed", func() bool { return m.QueueLen("rec") == 0 })
	if n := len(m.Snapshot()); n != 2 {
		t.Errorf("state keeps %d alerts; want the 2 firing (resolved ones are forgotten once confirmed)", n)
	}
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
	waitFor(t, "sends", func() bool {
		return countJob(a.batches(), "web") == 1 && countJob(a.batches(), "db") == 1 && countJob(b.batches(), "db") == 1
	})
	if n := countJob(b.batches(), "web"); n != 0 {
		t.Errorf("sink b got %d alerts of job web; want none", n)
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
		{"non-retryable is retried too, at the longest backoff", func(n int) (bool, error) {
			if n < 3 {
				return false, errors.New("400")
			}
			return false, nil
		}, 1, 0, 2, 3},
		// MaxAttempts is 5: the 5th failure is counted as a failure, and
		// retrying goes on until the sink takes the alert.
		{"no limit on attempts while pending", func(n int) (bool, error) {
			if n <= 7 {
				return true, errors.New("down")
			}
			return false, nil
		}, 1, 1, 6, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink := &recSink{name: "s", fail: c.fail}
			m, _ := newTestManager(t, ManagerOptions{}, sink)
			m.Fire(LeakAlert(testLeak("web", "rss")))
			waitFor(t, "a success", func() bool { return deliveries(m, "s", ResultSuccess) == 1 })
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
	state := newMemState()
	m, _ := newTestManager(t, ManagerOptions{State: state}, sink)
	for _, r := range []string{"a", "b", "c"} {
		m.Fire(LeakAlert(testLeak("web", r)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := m.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: got %v; want DeadlineExceeded", err)
	}
	if n := deliveries(m, "block", ResultDropped); n != 3 {
		t.Errorf("dropped: got %d; want the 3 undelivered alerts", n)
	}
	if n := len(state.load()); n != 3 {
		t.Errorf("persisted: %d alerts; want the 3 pending ones, for the next start", n)
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
	if got := countJob(sink.batches(), "web"); got != 4 {
		t.Errorf("sent before Close returned: got %d; want 4", got)
	}
}

// memState is a StateStore in memory.
type memState struct {
	mu sync.Mutex // guards m
	m  map[Fingerprint]StoredAlert
}

func newMemState() *memState { return &memState{m: map[Fingerprint]StoredAlert{}} }

func (s *memState) SaveAlert(a StoredAlert) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[a.Alert.Fingerprint()] = a
	return nil
}

func (s *memState) DeleteAlert(fp Fingerprint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, fp)
	return nil
}

func (s *memState) load() []StoredAlert {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []StoredAlert
	for _, a := range s.m {
		out = append(out, a.clone())
	}
	return out
}

// TestManagerStateSurvivesRestart: the state records each sink's
// confirmation; a Manager restored from it sends what was pending at
// once, and a resolved alert is forgotten once every sink confirmed it.
func TestManagerStateSurvivesRestart(t *testing.T) {
	down := &recSink{name: "down", fail: func(int) (bool, error) { return true, errors.New("down") }}
	up := &recSink{name: "up"}
	state := newMemState()
	m1, _ := newTestManager(t, ManagerOptions{State: state}, down, up)
	m1.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "up confirmed, down failing", func() bool {
		st := state.load()
		return len(st) == 1 && st[0].Sinks["up"].Gen == st[0].Gen && deliveries(m1, "down", ResultRetry) >= 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = m1.Close(ctx) // as a crash: "down" never got it
	stored := state.load()
	if stored[0].Sinks["down"].Gen >= stored[0].Gen {
		t.Fatalf("sink down confirmed an alert it never took: %+v", stored[0])
	}

	down2, up2 := &recSink{name: "down"}, &recSink{name: "up"}
	m2, _ := newTestManager(t, ManagerOptions{State: state, Restore: stored}, down2, up2)
	waitFor(t, "the pending alert re-sent to the recovered sink", func() bool { return countJob(down2.batches(), "web") == 1 })
	if n := len(m2.Active()); n != 1 {
		t.Errorf("restored: %d active; want 1", n)
	}
	resolveAll(m2, "web", "rss")
	waitFor(t, "the resolved alert forgotten", func() bool { return len(state.load()) == 0 })
	if n := countJob(up2.batches(), "web"); n != 1 {
		t.Errorf("sink up: %d sends after the restart; want only the resolve (it had the firing alert)", n)
	}
}

// refSink is a recSink whose receiver expires alerts at endsAt, like
// Alertmanager.
type refSink struct{ *recSink }

func (refSink) refreshes() bool { return true }

// TestManagerRefreshesEndsAt: a firing alert is re-sent to Alertmanager
// every ResolveTimeout/5 with endsAt = send + ResolveTimeout, so it stays
// active while soakd lives and ends within ResolveTimeout once it dies.
func TestManagerRefreshesEndsAt(t *testing.T) {
	sink := refSink{&recSink{name: "am"}}
	m, _ := newTestManager(t, ManagerOptions{ResolveTimeout: 500 * time.Millisecond, RepeatCheck: 50 * time.Millisecond}, sink)
	before := time.Now()
	m.Fire(LeakAlert(testLeak("web", "rss")))
	waitFor(t, "three sends", func() bool { return len(sentOf(sink.batches(), "SoakdLeak/web/rss")) >= 3 })
	after := time.Now()
	sent := sentOf(sink.batches(), "SoakdLeak/web/rss")
	for i, a := range sent {
		if a.EndsAt.Before(before.Add(500*time.Millisecond)) || a.EndsAt.After(after.Add(500*time.Millisecond)) {
			t.Errorf("send %d: endsAt %v not send time + 500ms", i, a.EndsAt)
		}
		if i > 0 && !a.EndsAt.After(sent[i-1].EndsAt) {
			t.Errorf("send %d: endsAt %v not later than the previous %v", i, a.EndsAt, sent[i-1].EndsAt)
		}
	}
}

// TestFireFinalSendsTheRunsFigures: to an Alertmanager, a live look's
// alert is sent at once; the looks after it, with new figures, update it
// quietly; the run's final analysis sends the run's own figures at once,
// once, and only when they differ from what was last sent. A sink that
// notifies people gets none of these updates at once (see
// TestOnePagePerFinding).
func TestFireFinalSendsTheRunsFigures(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)}
	sink := amSink{&recSink{name: "am"}}
	m, _ := newTestManager(t, ManagerOptions{Now: clock.Now, RepeatInterval: 4 * time.Hour, ResolveTimeout: 20 * time.Hour, RepeatCheck: time.Hour}, sink)
	const fp = "SoakdRequestsFailing/web/requests"
	failing := func(run, reason string) Alert { return RequestsFailingAlert("web", run, reason) }
	steps := []struct {
		name string
		act  func()
		want int    // sends of the alert so far
		last string // the summary the receiver holds
	}{
		{"a look fires it", func() { m.Fire(failing("7", "170 of 170 requests failed")) }, 1, "170 of 170"},
		{"a later look updates it quietly", func() { m.Fire(failing("7", "240 of 240 requests failed")) }, 1, "170 of 170"},
		{"the run's end sends its own figures", func() { m.FireFinal(failing("7", "300 of 300 requests failed")) }, 2, "300 of 300"},
		{"the same figures again send nothing", func() { m.FireFinal(failing("7", "300 of 300 requests failed")) }, 2, "300 of 300"},
		{"a look's quiet update, then the same figures at the end, are sent", func() {
			m.Fire(failing("7", "310 of 310 requests failed"))
			m.FireFinal(failing("7", "310 of 310 requests failed"))
		}, 3, "310 of 310"},
		{"the next run is sent at once", func() { m.Fire(failing("8", "5 of 5 requests failed")) }, 4, "5 of 5"},
	}
	for _, s := range steps {
		clock.Add(time.Minute)
		s.act()
		marker := RunFailedAlert("marker-"+s.name, "", "x")
		m.Fire(marker)
		waitFor(t, s.name, func() bool { return countJob(sink.batches(), "marker-"+s.name) == 1 })
		sent := sentOf(sink.batches(), fp)
		if len(sent) != s.want {
			t.Fatalf("%s: got %d sends; want %d", s.name, len(sent), s.want)
		}
		if got := sent[len(sent)-1].Annotations[AnnotationSummary]; !strings.Contains(got, s.last) {
			t.Errorf("%s: the receiver holds %q; want %q", s.name, got, s.last)
		}
	}
}

// TestOnePagePerFinding is issue 43's item 2 on the Manager: on a sink
// that notifies people, a finding is one page when it fires, one per
// repeat interval while it fires (with its latest figures), and one when
// it resolves; a look's update, a run's end with new figures, the next
// run and a new severity are no new pages. An alert that fires again
// after its resolve is a new finding, paged at once.
func TestOnePagePerFinding(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)}
	sink := &recSink{name: "hook"}
	m, _ := newTestManager(t, ManagerOptions{Now: clock.Now, RepeatInterval: 4 * time.Hour, RepeatCheck: time.Hour}, sink)
	const fp = "SoakdRequestsFailing/web/requests"
	failing := func(run, reason string) Alert { return RequestsFailingAlert("web", run, reason) }
	critical := failing("9", "all failed")
	critical.Labels[LabelSeverity] = SeverityCritical
	steps := []struct {
		name    string
		advance time.Duration
		act     func()
		want    int    // pages so far
		last    string // the summary of the last page
		status  Status // of the last page
	}{
		{"a look fires it", time.Minute, func() { m.Fire(failing("7", "170 of 170")) }, 1, "170 of 170", StatusFiring},
		{"a later look", time.Minute, func() { m.Fire(failing("7", "240 of 240")) }, 1, "170 of 170", StatusFiring},
		{"the run's end", 41 * time.Millisecond, func() { m.FireFinal(failing("7", "300 of 300")) }, 1, "170 of 170", StatusFiring},
		{"the next run", 5 * time.Minute, func() { m.FireFinal(failing("8", "12 of 12")) }, 1, "170 of 170", StatusFiring},
		{"a new severity", 5 * time.Minute, func() { m.Fire(critical) }, 1, "170 of 170", StatusFiring},
		{"the repeat, with the latest figures", 4 * time.Hour, m.Repeat, 2, "all failed", StatusFiring},
		{"resolved", time.Minute, func() { resolveAll(m, "web", "requests") }, 3, "all failed", StatusResolved},
		{"fires again: a new finding", time.Minute, func() { m.Fire(failing("10", "3 of 3")) }, 4, "3 of 3", StatusFiring},
	}
	for _, s := range steps {
		clock.Add(s.advance)
		s.act()
		marker := RunFailedAlert("marker-"+s.name, "", "x")
		m.Fire(marker)
		waitFor(t, s.name, func() bool { return countJob(sink.batches(), "marker-"+s.name) == 1 })
		sent := sentOf(sink.batches(), fp)
		if len(sent) != s.want {
			t.Fatalf("%s: %d pages; want %d", s.name, len(sent), s.want)
		}
		last := sent[len(sent)-1]
		if got := last.Annotations[AnnotationSummary]; got != s.last || last.Status != s.status {
			t.Errorf("%s: the last page is %s %q; want %s %q", s.name, last.Status, got, s.status, s.last)
		}
	}
	if n := m.QueueLen("hook"); n != 0 {
		t.Errorf("QueueLen = %d with nothing to page; want 0", n)
	}
}

// TestResolveBecauseSaysWhy: a resolve with its reason, even one that
// waits for the firing alert's delivery (the receiver was down), reaches
// the receiver with the reason as its summary and without the evidence
// annotation; the firing send before it keeps the figures it fired with.
func TestResolveBecauseSaysWhy(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	sink := &recSink{name: "rec", fail: func(int) (bool, error) {
		if down.Load() {
			return true, errors.New("connection refused")
		}
		return false, nil
	}}
	m, _ := newTestManager(t, ManagerOptions{}, sink)
	a := LeakAlert(testLeak("web", "rss"))
	a.Annotations[AnnotationEvidence] = "run 42 read rss inconclusive"
	m.Fire(a)
	const why = "Resolved: run 43 read rss stable, pss plateau, uss stable; the leak stopped"
	m.ResolveBecause(a.Fingerprint(), why)
	down.Store(false)
	waitFor(t, "the leak delivered, then resolved", func() bool { return len(m.Active()) == 0 && m.QueueLen("rec") == 0 })
	var firing, resolved []Alert
	for _, b := range sink.batches() {
		for _, x := range b {
			if x.Status == StatusFiring {
				firing = append(firing, x)
			} else {
				resolved = append(resolved, x)
			}
		}
	}
	if len(firing) == 0 || firing[len(firing)-1].Annotations[AnnotationSummary] != a.Annotations[AnnotationSummary] {
		t.Errorf("firing sends %+v; want the leak's own summary", firing)
	}
	if len(resolved) != 1 || resolved[0].Annotations[AnnotationSummary] != why {
		t.Fatalf("resolved sends %+v; want one saying %q", resolved, why)
	}
	if ev, ok := resolved[0].Annotations[AnnotationEvidence]; ok {
		t.Errorf("the resolve carries the evidence annotation %q; want none", ev)
	}
}

// TestSinkRepeatInterval: a sink with its own repeat_interval is paged
// again on it; the others on the Manager's.
func TestSinkRepeatInterval(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)}
	chat, hook := &recSink{name: "chat"}, &recSink{name: "hook"}
	m, _ := newTestManager(t, ManagerOptions{Now: clock.Now, RepeatInterval: 4 * time.Hour, RepeatCheck: time.Hour,
		SinkRepeat: map[string]time.Duration{"chat": time.Hour}}, chat, hook)
	const fp = "SoakdLeak/web/rss"
	m.Fire(LeakAlert(testLeak("web", "rss")))
	for _, step := range []struct {
		advance    time.Duration
		chat, hook int // pages so far
	}{{0, 1, 1}, {90 * time.Minute, 2, 1}, {90 * time.Minute, 3, 1}, {90 * time.Minute, 4, 2}} {
		clock.Add(step.advance)
		m.Repeat()
		waitFor(t, "the pages", func() bool {
			return len(sentOf(chat.batches(), fp)) == step.chat && len(sentOf(hook.batches(), fp)) == step.hook
		})
	}
}
