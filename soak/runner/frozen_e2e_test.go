package runner_test

import (
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
)

// TestEndToEndStoppedTargetIsNamed: the target is stopped with SIGSTOP for
// about 3 s in the middle of a load with a 1 s request timeout, then
// continued. The report names the span, with plausible bounds and the
// requests that timed out meanwhile, and the target is not taken for
// dead. The bounds are loose: on a busy machine the stop, the samples and
// the continue all come late.
func TestEndToEndStoppedTargetIsNamed(t *testing.T) {
	t.Parallel()
	url, pid := startTarget(t)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) // a stopped target ignores SIGTERM
	var once sync.Once
	var stopAt, contAt time.Time
	done := make(chan struct{})
	rep := soakTuned(t, url, pid, load.Options{Rate: 200, Concurrency: 50, Duration: 12 * time.Second}, func(o *runner.Options) {
		o.Load.Timeout = time.Second
		o.Baseline, o.Cooldown = -1, 0
		o.OnRecord = func(rec model.Record) {
			if rec.Requests < 100 {
				return
			}
			once.Do(func() {
				go func() {
					defer close(done)
					stopAt = time.Now()
					if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
						t.Errorf("SIGSTOP: %v", err)
						return
					}
					time.Sleep(3 * time.Second)
					contAt = time.Now()
					if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
						t.Errorf("SIGCONT: %v", err)
					}
				}()
			})
		}
	})
	select {
	case <-done:
	default:
		t.Fatal("the load never reached 100 requests: the target was not stopped")
	}
	if rep.Target.DiedAt != nil || rep.Target.Incarnations != 1 {
		t.Errorf("target died at %v, %d incarnations; want alive all along, one incarnation", rep.Target.DiedAt, rep.Target.Incarnations)
	}
	spans := rep.Target.Stopped
	if len(spans) != 1 {
		t.Fatalf("stopped spans %+v; want one (stopped %s, continued %s)", spans, stopAt.Format(time.StampMilli), contAt.Format(time.StampMilli))
	}
	s := spans[0]
	t.Logf("stopped %s to %s; span %+v", stopAt.Format(time.StampMilli), contAt.Format(time.StampMilli), s)
	const slack = 5 * time.Second // a sample may come late on a busy machine
	// A sample's time is stamped when its pass starts, and the pass reads
	// the process's state a little later: the sample that first saw the
	// stop (or the run again) may be stamped just before the signal. A CI
	// run's span ended 0.2 µs before the SIGCONT's time by that.
	const early = 250 * time.Millisecond // the test's sampling interval
	if s.From.Before(stopAt.Add(-early)) || s.From.After(stopAt.Add(slack)) || s.To.Before(contAt.Add(-early)) || s.To.After(contAt.Add(slack)) {
		t.Errorf("span %s to %s; want it to start after the SIGSTOP at %s and end after the SIGCONT at %s, each within %s (or %s before, a sample's pass)",
			s.From.Format(time.StampMicro), s.To.Format(time.StampMicro), stopAt.Format(time.StampMicro), contAt.Format(time.StampMicro), slack, early)
	}
	if !s.Root || s.Procs != 1 || s.UntilEnd {
		t.Errorf("span %+v; want the root stopped, one process, ended before the run", s)
	}
	// At 200 req/s, the requests sent during a 3 s stop time out after
	// 1 s: hundreds; ask for a few.
	if s.Timeouts < 4 || s.Timeouts > rep.Load.ErrorsByCause[load.CauseTimeout] {
		t.Errorf("span timeouts %d (load: %d timeouts); want ≥ 4, and no more than the load's", s.Timeouts, rep.Load.ErrorsByCause[load.CauseTimeout])
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "TARGET STOPPED: the target was stopped (SIGSTOP or a debugger) from ") {
		t.Errorf("report's first line does not name the stop:\n%s", b.String())
	}
}

// TestEndToEndAFreezeIsAnOutage: one closed-loop client with the default
// 30 s timeout, the target stopped for about 3 s of a 10 s load. No
// request fails (the one waiting completes 3 s late), yet the target
// answered nothing for 3 s: the requests are failing by time
// unavailable, well over the default 1 % of the load (at least one
// timeout: here the share, 0.1 s, is less than the 30 s timeout, so the
// test sets the allowance to 1 s).
func TestEndToEndAFreezeIsAnOutage(t *testing.T) {
	t.Parallel()
	url, pid := startTarget(t)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	var once sync.Once
	done := make(chan struct{})
	rep := soakTuned(t, url, pid, load.Options{Concurrency: 1, Duration: 10 * time.Second}, func(o *runner.Options) {
		o.Baseline, o.Cooldown = -1, 0
		o.Health.MaxUnavailable = 1
		o.OnRecord = func(rec model.Record) {
			if rec.Requests < 100 {
				return
			}
			once.Do(func() {
				go func() {
					defer close(done)
					if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
						t.Errorf("SIGSTOP: %v", err)
						return
					}
					time.Sleep(3 * time.Second)
					if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
						t.Errorf("SIGCONT: %v", err)
					}
				}()
			})
		}
	})
	select {
	case <-done:
	default:
		t.Fatal("the load never reached 100 requests: the target was not stopped")
	}
	h := rep.Requests
	if h == nil || h.Verdict != "failing" || h.Unavailable == nil || !slices.Contains(h.Failing, "unavailable") {
		t.Fatalf("requests %+v; want failing by time unavailable", h)
	}
	// The samples that see the stop come a pass late at each end on a
	// busy machine: ask for most of the 3 s, and no more than the load.
	if u := h.Unavailable.Seconds; u < 2 || u > h.LoadSeconds {
		t.Errorf("unavailable %.2f s of a %.1f s load; want about 3 s", u, h.LoadSeconds)
	}
	if !strings.HasPrefix(h.Reason, "unavailable for ") || !strings.Contains(h.Reason, "stopped from ") {
		t.Errorf("reason %q; want it to lead with the time unavailable and the stop", h.Reason)
	}
	if rep.Verdict != "failing" {
		t.Errorf("run verdict %s; want failing", rep.Verdict)
	}
}
