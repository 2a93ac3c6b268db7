// Package daemon is soakd's long-running service: it schedules each job's
// soak runs, keeps every run, sample and report in the store, recomputes
// the analysis of running runs every minute for Prometheus and the alerts,
// and serves the HTTP API, the web pages and /metrics. It touches no
// signals, flags or environment: cmd/soakd turns those into Options and
// calls Run and Reload.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/urlx"
)

// Defaults of Options.
const (
	DefaultLiveInterval     = time.Minute
	DefaultPruneInterval    = time.Hour
	DefaultShutdownTimeout  = 6 * time.Second
	DefaultStatusInterval   = 5 * time.Second
	defaultAlertCloseWindow = 1500 * time.Millisecond
)

// Notifier tells the service manager about the daemon's state
// (*sdnotify.Notifier satisfies it). Its methods must be cheap and safe to
// call when no manager listens.
type Notifier interface {
	Ready() error
	Reloading() error
	Status(string) error
	Watchdog() error
	Stopping() error
}

// Options are the daemon's dependencies and knobs; only Log is required.
type Options struct {
	Log *zap.Logger
	// Registry receives the daemon's metrics and serves /metrics; nil
	// means a new one.
	Registry *prometheus.Registry
	// Notifier gets READY, STATUS, WATCHDOG and STOPPING; nil means none.
	Notifier Notifier
	// Watchdog is the service manager's watchdog timeout; WATCHDOG=1 is
	// sent every half of it. Zero sends none.
	Watchdog time.Duration
	// Listener, when set, is used instead of listening on the config's
	// address (tests pass 127.0.0.1:0).
	Listener net.Listener
	// Version is reported in soakd_build_info.
	Version string
	// LiveInterval is the period of the live analysis; default 1 min.
	LiveInterval time.Duration
	// LiveGateLooks and LiveGateMinSoak hold a live leak alert back until
	// that many consecutive looks agree, and until the soak has run that
	// long (verdict.Gate); zero takes the defaults, chosen for a look a
	// minute. Tests that look every second lower them.
	LiveGateLooks   int
	LiveGateMinSoak time.Duration
	// PruneInterval is the period of retention pruning; default 1 h.
	PruneInterval time.Duration
	// ShutdownTimeout bounds the wait for open runs at shutdown; default 6 s,
	// so that with the HTTP and alert drains soakd exits within 10 s.
	ShutdownTimeout time.Duration
	// StatusInterval is the period of STATUS= updates; default 5 s.
	StatusInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Notifier == nil {
		o.Notifier = nopNotifier{}
	}
	if o.Version == "" {
		o.Version = "devel"
	}
	setDur(&o.LiveInterval, DefaultLiveInterval)
	setDur(&o.PruneInterval, DefaultPruneInterval)
	setDur(&o.ShutdownTimeout, DefaultShutdownTimeout)
	setDur(&o.StatusInterval, DefaultStatusInterval)
	if o.Now == nil {
		o.Now = time.Now
	}
}

func setDur(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

type nopNotifier struct{}

func (nopNotifier) Ready() error        { return nil }
func (nopNotifier) Reloading() error    { return nil }
func (nopNotifier) Status(string) error { return nil }
func (nopNotifier) Watchdog() error     { return nil }
func (nopNotifier) Stopping() error     { return nil }

// Daemon is the running service. Create it with New, start it with Run.
type Daemon struct {
	o    Options
	log  *zap.Logger
	st   *store.Store
	sh   *storeHealth // whether the store takes writes
	m    *metrics
	cron *cron.Cron

	ctx      context.Context // the runs' parent, cancelled at shutdown
	stopRuns context.CancelFunc
	runs     sync.WaitGroup // open runs
	loopback bool           // the API listens on loopback only

	mu      sync.Mutex // guards cfg, token, entries, active, alerts, ready, closing, addr
	cfg     *config.Config
	token   urlx.Secret
	entries map[string]cron.EntryID // scheduled jobs
	active  map[string]*activeRun   // by job name
	alerts  *alertHub
	ready   bool
	closing bool

	addr string // the API's address, once listening

	ev evidence // each job's runs of one process, across runs
}

// New checks cfg, opens the store in cfg.StateDir, stops the targets a
// crash left running, marks and analyses the runs it left open, and
// prunes old runs. It starts nothing: call Run.
func New(cfg *config.Config, o Options) (*Daemon, error) {
	o.setDefaults()
	d := &Daemon{
		o: o, log: o.Log, cfg: cfg, cron: cron.New(),
		entries: map[string]cron.EntryID{}, active: map[string]*activeRun{},
	}
	d.loopback = cfg.ListenIsLoopback()
	if o.Listener != nil {
		d.loopback = isLoopbackAddr(o.Listener.Addr())
	}
	tok, err := checkToken(cfg, d.loopback)
	if err != nil {
		return nil, err
	}
	d.token = tok
	d.ctx, d.stopRuns = context.WithCancel(context.Background())
	if d.m, err = newMetrics(o.Registry, o.Version); err != nil {
		return nil, fmt.Errorf("daemon: metrics: %w", err)
	}
	if d.sh, err = newStoreHealth(o.Registry); err != nil {
		return nil, fmt.Errorf("daemon: metrics: %w", err)
	}
	if d.st, err = store.Open(cfg.StateDir); err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	d.stopOrphans()
	d.restoreEvidence()
	d.recoverInterrupted()
	stored, err := d.st.Alerts()
	if err != nil {
		d.log.Error("reading the alerts of the last run of soakd; they are not re-sent", zap.Error(err))
	}
	// Resolve what no longer holds before any worker sends: a cut-short
	// run's alert must not fire again for a moment.
	stored = d.reconcileAlerts(stored)
	if d.alerts, err = newAlertHub(cfg, o, d.st, stored); err != nil {
		d.st.Close()
		return nil, err
	}
	if err := o.Registry.Register(firingCollector{active: func() []alerts.Alert { return d.hub().mgr.Active() }}); err != nil {
		d.alerts.close()
		d.st.Close()
		return nil, fmt.Errorf("daemon: metrics: %w", err)
	}
	d.prune()
	for _, j := range cfg.Jobs {
		d.m.initJob(j.Name)
	}
	d.restoreLastRuns()
	return d, nil
}

// checkToken returns the API token, and refuses a listener off loopback
// without one.
func checkToken(cfg *config.Config, loopback bool) (urlx.Secret, error) {
	tok, err := cfg.Token()
	if err != nil {
		return "", fmt.Errorf("daemon: %w", err)
	}
	if !loopback && tok == "" {
		return "", fmt.Errorf("daemon: listen %s is not on loopback and no token is set: set token or token_file, or listen on 127.0.0.1", cfg.Listen)
	}
	return tok, nil
}

func isLoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// Run listens, tells the service manager it is ready, schedules the jobs,
// and serves until ctx is cancelled. Then it stops the scheduler, stops the
// open runs (they end "stopped" with their analysis stored), and returns.
func (d *Daemon) Run(ctx context.Context) error {
	ln, err := d.listen()
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	defer d.stopRuns()
	d.mu.Lock()
	d.schedule(d.cfg.Jobs)
	d.ready = true
	d.mu.Unlock()
	d.cron.Start()
	cfg := d.config()
	d.log.Info("soakd serving", zap.String("addr", d.Addr()), zap.Int("jobs", len(cfg.Jobs)),
		zap.String("state_dir", cfg.StateDir))
	_ = d.o.Notifier.Ready()
	bg, stopBG := context.WithCancel(ctx)
	go d.background(bg)

	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("daemon: serve: %w", err)
	}
	stopBG()
	d.shutdown(srv)
	return err
}

func (d *Daemon) listen() (net.Listener, error) {
	ln := d.o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", d.config().Listen); err != nil {
			return nil, fmt.Errorf("daemon: listen: %w", err)
		}
	}
	d.mu.Lock()
	d.addr = ln.Addr().String()
	d.mu.Unlock()
	return ln, nil
}

// Addr returns the API's address once Run listens, else "".
func (d *Daemon) Addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr
}

// shutdown stops scheduling, stops open runs and waits for them to store
// their analysis, then closes the HTTP server, the alerts and the store.
func (d *Daemon) shutdown(srv *http.Server) {
	_ = d.o.Notifier.Stopping()
	d.mu.Lock()
	d.ready, d.closing = false, true
	d.mu.Unlock()
	d.log.Info("soakd stopping: stopping open runs")
	<-d.cron.Stop().Done()
	d.stopRuns()
	waitTimeout(&d.runs, d.o.ShutdownTimeout, d.log)
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		d.log.Warn("http shutdown", zap.Error(err))
	}
	d.mu.Lock()
	hub := d.alerts
	d.mu.Unlock()
	hub.close()
	if err := d.st.Close(); err != nil {
		d.log.Warn("closing the store", zap.Error(err))
	}
	d.log.Info("soakd stopped")
}

func waitTimeout(wg *sync.WaitGroup, timeout time.Duration, log *zap.Logger) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		log.Warn("open runs did not finish in time; they stay \"running\" and will be marked interrupted at the next start",
			zap.Duration("timeout", timeout))
	}
}

// background runs the periodic work: pruning, STATUS= and the watchdog.
func (d *Daemon) background(ctx context.Context) {
	prune := time.NewTicker(d.o.PruneInterval)
	defer prune.Stop()
	status := time.NewTicker(d.o.StatusInterval)
	defer status.Stop()
	var wd <-chan time.Time
	if d.o.Watchdog > 0 {
		t := time.NewTicker(d.o.Watchdog / 2)
		defer t.Stop()
		wd = t.C
		if d.storeOK() {
			_ = d.o.Notifier.Watchdog()
		}
	}
	d.sendStatus()
	for {
		select {
		case <-ctx.Done():
			return
		case <-prune.C:
			d.prune()
		case <-status.C:
			d.retryStore()
			d.sendStatus()
		case <-wd:
			// A store that takes no writes (a full disk) is not healthy:
			// no ping, so the service manager sees it.
			if d.storeOK() {
				_ = d.o.Notifier.Watchdog()
			}
		}
	}
}

// Reload applies a new config: jobs added, removed and changed take effect
// at once (a run already going finishes with the options it started with),
// the token changes, and the alert sinks and routes are rebuilt. The
// listener and the state directory stay as they were at start; a change is
// logged. On error nothing changes.
func (d *Daemon) Reload(cfg *config.Config) error {
	_ = d.o.Notifier.Reloading()
	defer func() { _ = d.o.Notifier.Ready() }()
	tok, err := checkToken(cfg, d.loopback)
	if err != nil {
		return err
	}
	d.mu.Lock()
	hub := d.alerts
	d.mu.Unlock()
	var newHub *alertHub
	if !hub.sameSinks(cfg) {
		if newHub, err = newAlertHub(cfg, d.o, d.st, hub.mgr.Snapshot()); err != nil {
			return err
		}
	}
	d.mu.Lock()
	old := d.cfg
	d.warnFixed(old, cfg)
	d.cfg, d.token = cfg, tok
	if newHub != nil {
		d.alerts = newHub
	} else {
		hub.update(cfg)
	}
	added, removed, changed := d.reschedule(old, cfg)
	for _, job := range removed {
		if d.active[job] == nil { // else release resolves them when the run ends
			d.alerts.jobRemoved(job)
		}
	}
	d.mu.Unlock()
	if newHub != nil {
		hub.handOver()
		go hub.close() // the new hub has its alerts and re-sends them as due
	}
	d.log.Info("config reloaded", zap.Strings("added", added), zap.Strings("removed", removed),
		zap.Strings("changed", changed), zap.Int("jobs", len(cfg.Jobs)))
	return nil
}

// warnFixed logs settings that a reload cannot change; called with mu held.
func (d *Daemon) warnFixed(old, cfg *config.Config) {
	if old.Listen != cfg.Listen || old.StateDir != cfg.StateDir {
		d.log.Warn("listen and state_dir changes take effect at the next restart",
			zap.String("listen", old.Listen), zap.String("state_dir", old.StateDir))
	}
}

// config returns the current config.
func (d *Daemon) config() *config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}
