package alerts

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	// Sinks by name, as Build returns them.
	Sinks map[string]Sink
	// Route returns the names of the sinks a job's alerts go to (the job's
	// "alerts" list); nil sends every alert to every sink. Unknown names
	// are logged and skipped.
	Route func(job string) []string
	// RepeatInterval is the least time between two sends of a firing
	// alert; a firing alert is also re-sent once it is due, by the
	// Manager's own loop. Zero means DefaultRepeatInterval.
	RepeatInterval time.Duration
	// RepeatCheck is how often that loop runs; zero means one minute.
	RepeatCheck time.Duration
	// ExternalURL builds GeneratorURL from the run_id annotation when an
	// alert has none.
	ExternalURL string
	// QueueSize bounds each sink's queue; zero means DefaultQueueSize.
	QueueSize int
	// Retry is the backoff of retryable failures; zero fields take the
	// defaults.
	Retry RetryConfig
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil means none.
	Logger *zap.Logger
	// Registerer gets soakd_alert_deliveries_total; nil means unregistered.
	Registerer prometheus.Registerer
}

// Manager keeps the state of firing alerts, deduplicated by Fingerprint,
// and delivers sends through one bounded queue and one worker per sink.
// Fire and Resolve never block on delivery.
type Manager struct {
	opts    ManagerOptions
	now     func() time.Time
	log     *zap.Logger
	metrics *Metrics
	workers map[string]*worker

	mu     sync.Mutex // guards active and closed
	active map[Fingerprint]*entry
	closed bool

	ctx      context.Context // cancelled when Close gives up draining
	cancel   context.CancelFunc
	stopLoop context.CancelFunc
	wg       sync.WaitGroup
}

// entry is the state of one firing alert.
type entry struct {
	alert    Alert
	lastSent time.Time
	sinks    []string
}

type worker struct {
	sink    Sink
	q       *queue
	dropped atomic.Int64 // drops so far, for rate-limited logging
}

// NewManager starts a Manager: one worker per sink and the repeat loop.
// Stop it with Close.
func NewManager(opts ManagerOptions) (*Manager, error) {
	fillManagerDefaults(&opts)
	metrics, err := NewMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("alerts: metrics: %w", err)
	}
	m := &Manager{
		opts: opts, now: opts.Now, log: opts.Logger, metrics: metrics,
		workers: map[string]*worker{}, active: map[Fingerprint]*entry{},
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for name, s := range opts.Sinks {
		metrics.initSink(name)
		w := &worker{sink: s, q: newQueue(opts.QueueSize)}
		m.workers[name] = w
		m.wg.Add(1)
		go m.work(name, w)
	}
	loopCtx, stop := context.WithCancel(m.ctx)
	m.stopLoop = stop
	m.wg.Add(1)
	go m.repeatLoop(loopCtx)
	return m, nil
}

func fillManagerDefaults(o *ManagerOptions) {
	setDefault(&o.RepeatInterval, DefaultRepeatInterval)
	setDefault(&o.RepeatCheck, time.Minute)
	setDefault(&o.Retry.Initial, DefaultRetryInitial)
	setDefault(&o.Retry.Max, DefaultRetryMax)
	if o.Retry.MaxAttempts == 0 {
		o.Retry.MaxAttempts = DefaultRetryAttempts
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// expiry is how long past a send a firing alert stays valid in
// Alertmanager (its endsAt) unless re-sent: two repeat intervals, so one
// lost re-send does not resolve it, while an alert soakd can no longer
// resolve (soakd died) ends by itself.
func (m *Manager) expiry() time.Duration { return 2 * m.opts.RepeatInterval }

// Fire records a as firing. A new alert is sent at once; an alert already
// firing gets its annotations updated and is re-sent only when its last
// send is RepeatInterval old.
func (m *Manager) Fire(a Alert) {
	a = a.clone()
	now := m.now()
	fp := a.Fingerprint()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	e, ok := m.active[fp]
	if ok {
		a.StartsAt = e.alert.StartsAt
	} else {
		e = &entry{sinks: m.route(fp.Job)}
		m.active[fp] = e
		if a.StartsAt.IsZero() {
			a.StartsAt = now
		}
	}
	a.Status = StatusFiring
	if a.GeneratorURL == "" {
		a.GeneratorURL = RunURL(m.opts.ExternalURL, a.Annotations[AnnotationRunID])
	}
	e.alert = a
	due := !ok || now.Sub(e.lastSent) >= m.opts.RepeatInterval
	var send Alert
	if due {
		send = m.markSent(e, now)
	}
	m.mu.Unlock()
	if due {
		m.enqueue(e.sinks, []Alert{send})
	}
}

// markSent stamps e as sent at now and returns the alert to send; called
// with mu held.
func (m *Manager) markSent(e *entry, now time.Time) Alert {
	e.lastSent = now
	e.alert.EndsAt = now.Add(m.expiry())
	return e.alert.clone()
}

// Resolve resolves every firing alert of (job, resource), whatever its
// alertname: each is sent once more, resolved, with EndsAt = now.
func (m *Manager) Resolve(job, resource string) {
	m.resolveWhere(func(fp Fingerprint) bool { return fp.Job == job && fp.Resource == resource })
}

// ResolveAlert resolves the one firing alert with this alertname, job and
// resource, e.g. AlertExhaustion when the time to exhaustion grew back
// above the threshold while the leak still fires.
func (m *Manager) ResolveAlert(alertname, job, resource string) {
	want := Fingerprint{Alertname: alertname, Job: job, Resource: resource}
	m.resolveWhere(func(fp Fingerprint) bool { return fp == want })
}

// ResolveMissing resolves every firing alert of job whose resource is not
// in stillFiring: the run ended without those leaks.
func (m *Manager) ResolveMissing(job string, stillFiring []string) {
	m.resolveWhere(func(fp Fingerprint) bool {
		return fp.Job == job && !slices.Contains(stillFiring, fp.Resource)
	})
}

func (m *Manager) resolveWhere(match func(Fingerprint) bool) {
	now := m.now()
	bySink := map[string][]Alert{}
	m.mu.Lock()
	for fp, e := range m.active {
		if !match(fp) {
			continue
		}
		delete(m.active, fp)
		a := e.alert.clone()
		a.Status, a.EndsAt = StatusResolved, now
		for _, s := range e.sinks {
			bySink[s] = append(bySink[s], a)
		}
	}
	m.mu.Unlock()
	for s, batch := range bySink {
		m.enqueue([]string{s}, batch)
	}
}

// Repeat re-sends every firing alert whose last send is RepeatInterval
// old. The Manager's loop calls it every RepeatCheck; tests with a fake
// clock call it directly.
func (m *Manager) Repeat() {
	now := m.now()
	bySink := map[string][]Alert{}
	m.mu.Lock()
	for _, e := range m.active {
		if now.Sub(e.lastSent) < m.opts.RepeatInterval {
			continue
		}
		a := m.markSent(e, now)
		for _, s := range e.sinks {
			bySink[s] = append(bySink[s], a)
		}
	}
	m.mu.Unlock()
	for s, batch := range bySink {
		m.enqueue([]string{s}, batch)
	}
}

// Active returns the firing alerts, sorted by fingerprint.
func (m *Manager) Active() []Alert {
	m.mu.Lock()
	out := make([]Alert, 0, len(m.active))
	for _, e := range m.active {
		out = append(out, e.alert.clone())
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		return out[i].Fingerprint().String() < out[j].Fingerprint().String()
	})
	return out
}

// QueueLen returns the number of batches waiting for sink (0 for an
// unknown sink).
func (m *Manager) QueueLen(sink string) int {
	if w, ok := m.workers[sink]; ok {
		return w.q.len()
	}
	return 0
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

func (m *Manager) repeatLoop(ctx context.Context) {
	defer m.wg.Done()
	t := time.NewTicker(m.opts.RepeatCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.Repeat()
		}
	}
}

// Close stops accepting alerts and drains the queues until ctx is done;
// then it abandons what is left (counted as dropped) and returns ctx's
// error.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.stopLoop()
	for _, w := range m.workers {
		w.q.close()
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		m.cancel()
		return nil
	case <-ctx.Done():
		m.cancel()
		<-done
		return fmt.Errorf("alerts: close: queues not drained: %w", ctx.Err())
	}
}
