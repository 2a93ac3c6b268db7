package sweep

import (
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// latencies gathers a level's requests once its warm-up is over: by time
// from the first result, or by count. In a closed loop each request is
// timed from its send, the dial included (a SYN retransmitted counts),
// and the next is sent only when it returns: there is no schedule for
// coordinated omission to skip, so the latencies are complete as they
// are.
type latencies struct {
	warmDur time.Duration
	warmReq uint64
	now     func() time.Time

	mu          sync.Mutex // guards everything below
	seen        uint64
	first       time.Time // of the first result
	start, last time.Time // of the measured span
	hist        *hdrhistogram.Histogram
	errors      uint64
	causes      map[string]uint64
}

func newLatencies(warmDur time.Duration, warmReq uint64) *latencies {
	// 1 µs to 1 h at 3 significant digits: about 200 KB.
	return &latencies{warmDur: warmDur, warmReq: warmReq, now: time.Now,
		hist: hdrhistogram.New(1, 3_600_000_000, 3), causes: map[string]uint64{}}
}

// observe is the load's OnResult.
func (l *latencies) observe(r load.Result) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen++
	if l.first.IsZero() {
		l.first = now
	}
	if l.seen <= l.warmReq || now.Sub(l.first) < l.warmDur {
		return
	}
	if l.start.IsZero() {
		l.start = now
	}
	l.last = now
	_ = l.hist.RecordValue(max(r.Latency.Microseconds(), 1))
	if r.Cause != "" {
		l.errors++
		l.causes[r.Cause]++
	}
}

// measuring tells whether the warm-up is over.
func (l *latencies) measuring() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.start.IsZero()
}

// fill sets the level's throughput, latency and error figures.
func (l *latencies) fill(lv *Level) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hist
	lv.Requests = uint64(h.TotalCount())
	if span := l.last.Sub(l.start).Seconds(); span > 0 {
		lv.Seconds = span
		lv.Throughput = float64(lv.Requests) / span
	}
	sec := func(us int64) float64 { return float64(us) / 1e6 }
	lv.P50, lv.P99, lv.P999 = sec(h.ValueAtQuantile(50)), sec(h.ValueAtQuantile(99)), sec(h.ValueAtQuantile(99.9))
	lv.Max = sec(h.Max())
	lv.Errors = l.errors
	if len(l.causes) > 0 {
		lv.ErrorsByCause = l.causes
	}
	count := func(lo, hi float64) uint64 {
		var n uint64
		for _, b := range h.Distribution() {
			if sec(b.From) >= lo && sec(b.From) < hi {
				n += uint64(b.Count)
			}
		}
		return n
	}
	lv.SynModes = synModes(synBands(linearSynTimeouts()), count)
}

// kernelWatch samples sock_diag's view of the URL's port while a level is
// measured, and reads the TcpExt counters at its start and end.
type kernelWatch struct {
	port  uint16
	mu    sync.Mutex // guards everything below
	start *probes.ListenCounters
	qMax  int
	limit int
	est   []float64
	held  []float64
	err   error
}

// run samples every 100 ms until stop is closed, once the warm-up is
// over: after warm from now, or once lat measures (a warm-up in
// requests). The clock is its own: a level whose requests take longer
// than it (a server that stopped accepting) is still watched.
func (k *kernelWatch) run(lat *latencies, warm time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	from := time.Now().Add(warm)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if (warm > 0 && time.Now().After(from)) || lat.measuring() {
			k.sample()
		}
	}
}

func (k *kernelWatch) sample() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.start == nil {
		c, err := probes.ReadListenCounters("", 0)
		if err != nil {
			k.err = err
		}
		k.start = &c
	}
	q, err := probes.ReadListenQueue(k.port)
	if err != nil {
		k.err = err
		return
	}
	k.qMax, k.limit = max(k.qMax, q.Queue), max(k.limit, q.Limit)
	k.est = append(k.est, float64(q.Established))
	k.held = append(k.held, float64(q.Established-q.Queue))
}

// fill sets the level's kernel figures; the counters' end is read now.
func (k *kernelWatch) fill(lv *Level) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.start != nil {
		if end, err := probes.ReadListenCounters("", 0); err == nil {
			d := end.Sub(*k.start)
			lv.ListenOverflows, lv.ListenDrops, lv.SynRetrans = d.ListenOverflows, d.ListenDrops, d.SynRetrans
		}
	}
	lv.AcceptQueueMax, lv.AcceptQueueLimit = k.qMax, k.limit
	lv.Established, lv.Accepted = slices.Max(append(k.est, 0)), slices.Max(append(k.held, 0))
}

// fillTarget sets the target's RSS, fds, threads and fd limit, the highest over
// the level's soak samples, and the CPU verdict.
func fillTarget(lv *Level, rep *model.Report) {
	lv.CPU = rep.CPU
	lv.CPUBound = rep.CPU.Bound == verdict.BoundCPU
	var rss, fds, est, threads []float64
	for _, r := range rep.Records {
		if r.Phase != verdict.Soak || !r.Alive {
			continue
		}
		if r.RSSValid {
			rss = append(rss, float64(r.RSS))
		}
		if r.FDsValid {
			fds = append(fds, float64(r.FDs))
			lv.FDLimit = int(r.FDLimit)
		}
		if r.TCPValid {
			est = append(est, float64(r.TCPEstablished))
		}
		if r.ThreadsValid {
			threads = append(threads, float64(r.Threads))
		}
	}
	top := func(v []float64) float64 { return slices.Max(append(v, 0)) }
	lv.RSS, lv.FDs, lv.Threads = uint64(top(rss)), int(top(fds)), int(top(threads))
	if lv.Established == 0 {
		lv.Established = top(est)
		lv.Accepted = lv.Established
	}
}
