package alerts

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// DefaultResolveTimeout is how long past its last send a firing alert stays
// active in Alertmanager (its endsAt), as Alertmanager's own
// resolve_timeout; the Manager re-sends each firing alert to Alertmanager
// every fifth of it.
const DefaultResolveTimeout = 5 * time.Minute

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	// Sinks by name, as Build returns them.
	Sinks map[string]Sink
	// Route returns the names of the sinks a job's alerts go to (the job's
	// "alerts" list); nil sends every alert to every sink. Unknown names
	// are logged and skipped.
	Route func(job string) []string
	// RepeatInterval is how often a firing alert is notified again on a
	// sink that notifies people (webhook, Slack, exec). Zero means
	// DefaultRepeatInterval.
	RepeatInterval time.Duration
	// SinkRepeat overrides RepeatInterval for the sinks it names (a
	// sink's own repeat_interval); zero or absent means RepeatInterval.
	SinkRepeat map[string]time.Duration
	// ResolveTimeout is the endsAt of a firing alert sent to Alertmanager:
	// last send + ResolveTimeout. It is re-sent every ResolveTimeout/5, so
	// a dead soakd's alerts end within ResolveTimeout. Zero means
	// DefaultResolveTimeout.
	ResolveTimeout time.Duration
	// RepeatCheck bounds how long a sink's worker sleeps before it looks
	// for due sends again; zero means one minute.
	RepeatCheck time.Duration
	// ExternalURL builds GeneratorURL from the run_id annotation when an
	// alert has none.
	ExternalURL string
	// QueueSize bounds the alerts in one send; zero means
	// DefaultQueueSize. More pending alerts go in the next send.
	QueueSize int
	// Retry is the backoff between failed sends; zero fields take the
	// defaults. A failing sink is retried for as long as it has pending
	// alerts; after MaxAttempts failures in a row the failure is counted
	// and logged as an error.
	Retry RetryConfig
	// ProbeInterval is how often a failing sink's receiver is probed
	// during the backoff (Alertmanager's /-/ready, a TCP connect for the
	// webhooks); a probe that succeeds ends the backoff at once. Zero
	// means DefaultProbeInterval.
	ProbeInterval time.Duration
	// State persists the alerts; nil keeps them in memory only.
	State StateStore
	// Restore seeds the Manager with alerts persisted earlier (or handed
	// over by the Manager it replaces on reload); they are sent again as
	// due.
	Restore []StoredAlert
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sleep waits d, or until ctx is done, and reports whether d elapsed;
	// the backoff between failed sends waits with it. Nil means a real
	// timer. Tests pass one that records d and returns at once, so that
	// the backoff is checked without sleeping. While a failing receiver
	// is probed (a wait longer than ProbeInterval), the wait's end is kept
	// by the wall clock: such a test sets ProbeInterval above the backoff
	// or uses a sink that has no probe.
	Sleep func(ctx context.Context, d time.Duration) bool
	// Logger; nil means none.
	Logger *zap.Logger
	// Registerer gets soakd_alert_deliveries_total; nil means unregistered.
	Registerer prometheus.Registerer
}

// Manager keeps the state of alerts, deduplicated by Fingerprint, and
// delivers them with one worker per sink. An alert stays pending for a
// sink until the sink confirms it: failed sends are retried with backoff
// while the alert is pending, with no limit on attempts. Fire and Resolve
// never block on delivery.
type Manager struct {
	opts    ManagerOptions
	now     func() time.Time
	log     *zap.Logger
	metrics *Metrics
	workers map[string]*worker

	mu       sync.Mutex // guards alerts, gen, closed, state
	alerts   map[Fingerprint]*StoredAlert
	routes   map[Fingerprint][]string
	gen      uint64
	closed   bool
	state    StateStore
	stateErr atomic.Int64 // failed state writes, for rate-limited logging

	ctx    context.Context // cancelled when Close gives up draining
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type worker struct {
	sink    Sink
	refresh bool          // the sink is an Alertmanager: keep endsAt fresh
	repeat  time.Duration // the sink's own repeat interval; 0: the Manager's
	kick    chan struct{} // holds a token when there may be new work
}

// refresher is implemented by sinks whose receiver expires a firing alert
// at its endsAt (Alertmanager): the Manager keeps their endsAt fresh.
type refresher interface{ refreshes() bool }

// NewManager starts a Manager: one worker per sink. Stop it with Close.
func NewManager(opts ManagerOptions) (*Manager, error) {
	fillManagerDefaults(&opts)
	metrics, err := NewMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("alerts: metrics: %w", err)
	}
	m := &Manager{
		opts: opts, now: opts.Now, log: opts.Logger, metrics: metrics, state: opts.State,
		workers: map[string]*worker{}, alerts: map[Fingerprint]*StoredAlert{},
		routes: map[Fingerprint][]string{},
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for name, s := range opts.Sinks {
		metrics.initSink(name)
		r, ok := s.(refresher)
		m.workers[name] = &worker{sink: s, refresh: ok && r.refreshes(), repeat: opts.SinkRepeat[name], kick: make(chan struct{}, 1)}
	}
	for _, sa := range opts.Restore {
		sa = sa.clone()
		fp := sa.Alert.Fingerprint()
		m.alerts[fp] = &sa
		m.routes[fp] = m.route(fp.Job)
		m.gen = max(m.gen, sa.Gen)
		if sa.Alert.Status == StatusResolved {
			m.settle(fp, &sa) // saved, or forgotten when no sink still needs it
		}
	}
	for name, w := range m.workers {
		m.wg.Add(1)
		go m.work(name, w)
	}
	return m, nil
}

func fillManagerDefaults(o *ManagerOptions) {
	setDefault(&o.RepeatInterval, DefaultRepeatInterval)
	setDefault(&o.ResolveTimeout, DefaultResolveTimeout)
	setDefault(&o.RepeatCheck, time.Minute)
	setDefault(&o.ProbeInterval, DefaultProbeInterval)
	setDefault(&o.Retry.Initial, DefaultRetryInitial)
	setDefault(&o.Retry.Max, DefaultRetryMax)
	if o.Retry.MaxAttempts <= 0 {
		o.Retry.MaxAttempts = DefaultRetryAttempts
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// repeatFor is how often a firing alert is sent again to w's sink, and
// expiryFor how long past a send it stays valid there (its endsAt).
func (m *Manager) repeatFor(w *worker) time.Duration {
	switch {
	case w.refresh:
		return m.opts.ResolveTimeout / 5
	case w.repeat > 0:
		return w.repeat
	}
	return m.opts.RepeatInterval
}

func (m *Manager) expiryFor(w *worker) time.Duration {
	if w.refresh {
		return m.opts.ResolveTimeout
	}
	return 2 * m.repeatFor(w)
}

// Fire records a as firing. A new alert is sent at once. An alert already
// firing keeps its start and gets a's annotations: a new run or severity
// is sent at once to an Alertmanager, while a sink that notifies people
// gets the update with its next repeat (one page per finding per repeat
// interval, see pendingFor); other updates go out with the next send.
func (m *Manager) Fire(a Alert) { m.fire(a, false) }

// FireFinal is Fire for a run's final analysis: an alert already firing
// for the same run (a live look of it sent it) goes out again at once to
// an Alertmanager when its annotations changed since it was last sent for
// a new generation, so that the receiver holds the run's own figures
// ("300 of 300 requests failed", the whole soak's slope) and not a look's, which would
// otherwise stand until the repeat interval. A run's end sends at most
// this one update; the looks before it update quietly.
func (m *Manager) FireFinal(a Alert) { m.fire(a, true) }

func (m *Manager) fire(a Alert, final bool) {
	a = a.clone()
	now := m.now()
	fp := a.Fingerprint()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	e, ok := m.alerts[fp]
	changed := true
	if ok && e.Alert.Status == StatusFiring {
		a.StartsAt = e.Alert.StartsAt
		changed = a.Annotations[AnnotationRunID] != e.Alert.Annotations[AnnotationRunID] ||
			a.Labels[LabelSeverity] != e.Alert.Labels[LabelSeverity]
		e.Updated = e.Updated || !maps.Equal(a.Annotations, e.Alert.Annotations)
		changed = changed || final && e.Updated
	} else {
		if !ok {
			e = &StoredAlert{Sinks: map[string]SinkState{}}
			m.alerts[fp] = e
		}
		m.routes[fp] = m.route(fp.Job)
		if a.StartsAt.IsZero() {
			a.StartsAt = now
		}
	}
	a.Status, a.EndsAt = StatusFiring, time.Time{}
	e.ResolveOnDelivery, e.ResolveWhy = false, ""
	if a.GeneratorURL == "" {
		a.GeneratorURL = RunURL(m.opts.ExternalURL, a.Annotations[AnnotationRunID])
	}
	e.Alert = a
	if changed {
		m.gen++
		e.Gen, e.Updated = m.gen, false
	}
	m.save(e)
	sinks := m.routes[fp]
	m.mu.Unlock()
	if changed {
		m.kick(sinks)
	}
}

// ResolveAlert resolves the one firing alert with this alertname, job and
// resource, e.g. AlertExhaustion when the time to exhaustion grew back
// above the threshold while the leak still fires.
func (m *Manager) ResolveAlert(alertname, job, resource string) {
	want := Fingerprint{Alertname: alertname, Job: job, Resource: resource}
	m.ResolveIf(func(a Alert) bool { return a.Fingerprint() == want })
}

// ResolveMissing resolves every firing alert of job whose resource is not
// in stillFiring: the run ended without those leaks.
func (m *Manager) ResolveMissing(job string, stillFiring []string) {
	keep := map[string]bool{}
	for _, r := range stillFiring {
		keep[r] = true
	}
	m.ResolveIf(func(a Alert) bool {
		fp := a.Fingerprint()
		return fp.Job == job && !keep[fp.Resource]
	})
}

// ResolveBecause resolves the firing alert fp, its resolved notification
// saying why: its summary is why (the evidence that the finding is gone,
// not the figures it fired with), and it drops the evidence annotation.
func (m *Manager) ResolveBecause(fp Fingerprint, why string) {
	m.resolveIf(func(a Alert) bool { return a.Fingerprint() == fp }, why)
}

// ResolveIf resolves every firing alert match accepts; each is sent once
// more, resolved, with EndsAt = now, until every sink confirms it.
func (m *Manager) ResolveIf(match func(Alert) bool) { m.resolveIf(match, "") }

func (m *Manager) resolveIf(match func(Alert) bool, why string) {
	now := m.now()
	kick := map[string]bool{}
	m.mu.Lock()
	for fp, e := range m.alerts {
		if e.Alert.Status != StatusFiring || !match(e.Alert) {
			continue
		}
		e.ResolveWhy = why
		if !m.delivered(fp, e) {
			e.ResolveOnDelivery = true
			m.save(e)
			continue
		}
		m.resolve(fp, e, now, kick)
	}
	m.mu.Unlock()
	for s := range kick {
		m.kick([]string{s})
	}
}

// resolve marks the firing alert e resolved at now and notes its sinks in
// kick; called with mu held.
func (m *Manager) resolve(fp Fingerprint, e *StoredAlert, now time.Time, kick map[string]bool) {
	e.Alert.Status, e.Alert.EndsAt = StatusResolved, now
	if e.ResolveWhy != "" {
		e.Alert.Annotations = cloneMap(e.Alert.Annotations)
		e.Alert.Annotations[AnnotationSummary] = e.ResolveWhy
		delete(e.Alert.Annotations, AnnotationEvidence)
	}
	e.ResolveOnDelivery, e.ResolveWhy = false, ""
	m.gen++
	e.Gen = m.gen
	for _, s := range m.routes[fp] {
		kick[s] = true
	}
	m.settle(fp, e)
}

// delivered says whether every sink of e's route confirmed a delivery of
// the firing alert since it started; called with mu held.
func (m *Manager) delivered(fp Fingerprint, e *StoredAlert) bool {
	for _, s := range m.routes[fp] {
		if e.Sinks[s].Delivered.Before(e.Alert.StartsAt) {
			return false
		}
	}
	return true
}

// settle saves e, or forgets it when it is resolved and every sink of its
// route confirmed that; called with mu held.
func (m *Manager) settle(fp Fingerprint, e *StoredAlert) {
	if e.Alert.Status == StatusResolved {
		done := true
		for _, s := range m.routes[fp] {
			if e.Sinks[s].Gen < e.Gen {
				done = false
				break
			}
		}
		if done {
			delete(m.alerts, fp)
			delete(m.routes, fp)
			if m.state != nil {
				m.stateFailed(m.state.DeleteAlert(fp))
			}
			return
		}
	}
	m.save(e)
}

func (m *Manager) save(e *StoredAlert) {
	if m.state != nil {
		m.stateFailed(m.state.SaveAlert(e.clone()))
	}
}

// stateFailed logs a failed state write: the first and then every 100th.
func (m *Manager) stateFailed(err error) {
	if err == nil {
		return
	}
	if n := m.stateErr.Add(1); n%100 == 1 {
		m.log.Error("persisting alert state failed; alerts are still delivered, but a restart may not re-send or resolve them",
			zap.Int64("failures", n), zap.Error(err))
	}
}

// Repeat wakes every sink's worker to look for due sends now; tests with a
// fake clock call it after moving the clock.
func (m *Manager) Repeat() {
	for _, w := range m.workers {
		signal(w.kick)
	}
}

func (m *Manager) kick(sinks []string) {
	for _, s := range sinks {
		if w, ok := m.workers[s]; ok {
			signal(w.kick)
		}
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Active returns the firing alerts, sorted by fingerprint.
func (m *Manager) Active() []Alert {
	m.mu.Lock()
	out := make([]Alert, 0, len(m.alerts))
	for _, e := range m.alerts {
		if e.Alert.Status == StatusFiring {
			out = append(out, e.Alert.clone())
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		return out[i].Fingerprint().String() < out[j].Fingerprint().String()
	})
	return out
}

// Snapshot returns every alert's state (firing, and resolved but not yet
// confirmed), for a Manager that replaces this one.
func (m *Manager) Snapshot() []StoredAlert {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]StoredAlert, 0, len(m.alerts))
	for _, e := range m.alerts {
		out = append(out, e.clone())
	}
	return out
}

// Detach stops persisting: a Manager that replaces this one (a reload)
// owns the state from now on. This one goes on delivering until Close.
func (m *Manager) Detach() {
	m.mu.Lock()
	m.state = nil
	m.mu.Unlock()
}

// QueueLen returns the number of alerts pending (not yet confirmed) for
// sink (0 for an unknown sink).
func (m *Manager) QueueLen(sink string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	w, ok := m.workers[sink]
	if !ok {
		return 0
	}
	for fp, e := range m.alerts {
		if routed(m.routes[fp], sink) && pendingFor(w, e, e.Sinks[sink]) {
			n++
		}
	}
	return n
}

func (m *Manager) route(job string) []string {
	if m.opts.Route == nil {
		names := make([]string, 0, len(m.workers))
		for n := range m.workers {
			names = append(names, n)
		}
		sort.Strings(names)
		return names
	}
	var names []string
	for _, n := range m.opts.Route(job) {
		if _, ok := m.workers[n]; !ok {
			m.log.Warn("alert route names an unknown sink", zap.String("job", job), zap.String("sink", n))
			continue
		}
		names = append(names, n)
	}
	return names
}

// Close stops accepting alerts and goes on delivering what is pending
// until every sink confirmed it or ctx is done; then it abandons the rest
// (counted as dropped; with a State they are re-sent at the next start)
// and returns ctx's error.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.Repeat()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		m.cancel()
		return nil
	case <-ctx.Done():
		m.cancel()
		<-done
		return fmt.Errorf("alerts: close: pending alerts not delivered: %w", ctx.Err())
	}
}
