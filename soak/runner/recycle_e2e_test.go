package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// TestEndToEndProcsCSV soaks a prefork server whose workers leak and are
// replaced after 100 requests, with --out, and reads procs.csv back onto
// samples.csv: every sample lists every process, and the workers show up
// as many identities {pid, start} under the same root.
func TestEndToEndProcsCSV(t *testing.T) {
	t.Parallel()
	url, pid := startRecycle(t, "--workers", "3", "--max-requests", "100", "--leak-bytes", "65536")
	out := t.TempDir()
	o := runner.Options{
		Load: load.Options{Endpoints: []load.Endpoint{{URL: url}}, Rate: 200, Concurrency: 4, Duration: 5 * time.Second,
			Timeout: 5 * time.Second},
		Interval: 250 * time.Millisecond,
		Warmup:   runner.Warmup{Fraction: 0.15},
		OutDir:   out,
		Log:      zaptest.NewLogger(t),
	}
	o.Target.PID, o.Target.URL = pid, url
	o.Sampler.SmapsInterval = -1
	rep := runSoak(t, o)
	recs := readBack(t, out)
	ids := map[[2]uint64]bool{}
	for i, r := range recs {
		if !r.Alive {
			continue
		}
		if len(r.Members) != r.Procs || r.RootPID != int32(pid) {
			t.Fatalf("sample %d: %d members of %d processes, root %d; want all of them under root %d", i, len(r.Members), r.Procs, r.RootPID, pid)
		}
		for _, m := range r.Members {
			if m.PID != int32(pid) {
				ids[[2]uint64{uint64(m.PID), m.Start}] = true
			}
		}
	}
	t.Logf("%d samples, %d worker identities, %d requests; rss verdict %q (%s)", len(recs), len(ids), rep.Load.Requests,
		rep.Resources["rss"].Verdict, rep.Resources["rss"].Reason)
	if want := 3 + int(rep.Load.Requests)/100/2; len(ids) < want {
		t.Errorf("%d worker identities in procs.csv; want at least %d for %d requests", len(ids), want, rep.Load.Requests)
	}
}

// readBack reads samples.csv and procs.csv from dir and joins them.
func readBack(t *testing.T, dir string) []model.Record {
	t.Helper()
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	recs, err := model.ReadCSV(open("samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := model.ReadProcsCSV(open("procs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.AttachMembers(recs, rows); err != nil {
		t.Fatal(err)
	}
	return recs
}

// startRecycle starts testdata/recycle with args; see startServer.
func startRecycle(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return startProgram(t, soaktest.Binary(t, soaktest.Recycle), args...)
}

// soakRecycle soaks testdata/recycle, started with args, for 14 s at 200
// req/s (4 in flight), a tenth of it warm-up, without smaps, sampled
// every 200 ms. Paced instead, under -race on a busy machine, a sample of
// the 4-process tree cost soakd 9.1 ms of CPU (the race detector's
// instrumentation of the sampler, several times its cost in a release
// build), the pacer's 2 % budget spaced the samples 471 ms apart, and a
// worker's 1–2 s life held two or three of them: its growth within its
// life read as 84 % of its size, under the transient rule's bar, and
// the 64 KiB/request leak inconclusive. The test is of the lives rule,
// not of the pacer.
func soakRecycle(t *testing.T, args ...string) *model.Report {
	t.Helper()
	rep, _ := soakRecycleAt(t, 4, 200*time.Millisecond, args...)
	return rep
}

// soakRecycleAt is soakRecycle with at most inFlight requests in flight
// (0: the load's default bound), sampled every interval (0: paced); it
// also returns the run's --out directory.
func soakRecycleAt(t *testing.T, inFlight int, interval time.Duration, args ...string) (*model.Report, string) {
	t.Helper()
	url, pid := startRecycle(t, args...)
	o := runner.Options{
		Load: load.Options{Endpoints: []load.Endpoint{{URL: url}}, Rate: 200, Concurrency: inFlight, Duration: 14 * time.Second,
			Timeout: 5 * time.Second},
		Warmup:   runner.Warmup{Fraction: 0.1},
		Interval: interval,
		OutDir:   t.TempDir(),
		Log:      zaptest.NewLogger(t),
	}
	o.Target.PID, o.Target.URL = pid, url
	o.Sampler.SmapsInterval = -1
	return runSoak(t, o), o.OutDir
}

// Recycling hides a leak in the tree's total: each process grows and is
// replaced. The verdict must find the leak in the processes' own growth,
// name it masked by recycling, and count the replacements.
func TestEndToEndRecyclingMasksALeak(t *testing.T) {
	t.Parallel()
	// 64 KiB a request: each fresh worker is a Go program whose runtime
	// grows by a MiB or two over its first requests, and at 16 KiB (2.4
	// MiB per 150-request life) that warm-up made the lives' estimate
	// 1.5–1.9× the leak (25–31 KiB/request); here it is a small share.
	const leak = 64 << 10 // bytes per request
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"prefork recycling workers", []string{"--workers", "3", "--max-requests", "150"}},
		{"supervisor restarting its child", []string{"--workers", "1", "--restart-every", "2s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := soakRecycle(t, append(tc.args, "--leak-bytes", fmt.Sprint(leak))...)
			rss := rep.Resources["rss"]
			t.Logf("rss: %s, masked by %q, %d replacements: %s", rss.Verdict, rss.MaskedBy, rss.Replacements, rss.Reason)
			if rss.Verdict != "leak" || rss.MaskedBy != "recycling" || rss.Replacements < 1 {
				t.Fatalf("rss = %s masked by %q with %d replacements; want a leak masked by recycling", rss.Verdict, rss.MaskedBy, rss.Replacements)
			}
			if rss.PerRequest < 0.5*leak || rss.PerRequest > 1.5*leak {
				t.Errorf("rss per_request = %.0f B; want about %d B", rss.PerRequest, leak)
			}
			// A worker that exits may reset a request or two in flight:
			// 0.3 % to 1.7 % of them here, which makes the run failing
			// when over 1 %; the leak is still the run's finding.
			if h := rep.Requests; h != nil {
				t.Logf("requests: %s: %s", h.Verdict, h.Reason)
			}
			if rep.Verdict != "leak" && !(rep.Failing() && rep.HasLeak()) {
				t.Errorf("run verdict = %s; want leak (or failing with the leak named)", rep.Verdict)
			}
		})
	}
}

// Recycling without a leak: each fresh worker is a Go program whose
// runtime grows by half a MiB or so over its 150-request life (its first
// collection spans it), which the lives alone read as 2.6–3.5 KiB a
// request carried (a masked leak, before the transient rule applied to
// lives). A life of 2 s that grew by 5 % of its own size cannot tell that
// from a leak, so it is not one.
func TestEndToEndRecyclingWithoutALeakIsNotALeak(t *testing.T) {
	t.Parallel()
	rep := soakRecycle(t, "--workers", "3", "--max-requests", "150", "--leak-bytes", "0")
	rss := rep.Resources["rss"]
	t.Logf("rss: %s, masked by %q: %s", rss.Verdict, rss.MaskedBy, rss.Reason)
	if rss.Verdict == "leak" || rep.Verdict == "leak" {
		t.Errorf("rss %s (masked by %q), run %s; want no leak", rss.Verdict, rss.MaskedBy, rep.Verdict)
	}
}

// soakSlowing soaks testdata/recycle's prefork server (3 workers, each
// replaced after 150 requests) whose workers slow as they age
// (--slow-per-request 2ms: a worker's last request waits 300 ms), in an
// open loop at 200 req/s with the default in-flight bound, for 14 s: the
// load's connections pile up in each worker through its life, from one
// or two to 15–45 (a worker's fds 11 → 40–72), as on a busy machine
// (bench/README.md, prefork-no-leak).
func soakSlowing(t *testing.T, args ...string) (*model.Report, string) {
	t.Helper()
	// Sampled every 200 ms: each process's connections to soakd are
	// counted on every sample, a readlink per fd and a socket dump, 9 ms
	// of CPU a sample under bench/busy.sh, and the pacer, which keeps
	// sampling under 2 % of a core, then sampled every 500 ms: a worker's
	// 1–3 s life held too few samples for the lives rule (the leak read
	// inconclusive). The test is of the rule, not of the pacer.
	return soakRecycleAt(t, 0, 200*time.Millisecond, append([]string{"--workers", "3", "--max-requests", "150", "--slow-per-request", "2ms"}, args...)...)
}

// The load's connections piling up in a prefork worker are not an fd
// leak: the lives rule fits each process's fds net of its connections to
// soakd. Fitted on all fds, each life carried 0.1 fds or more a request.
func TestEndToEndLoadPilingUpInWorkersIsNotAnFDLeak(t *testing.T) {
	t.Parallel()
	rep, _ := soakSlowing(t, "--leak-bytes", "0")
	fds := rep.Resources["fds"]
	t.Logf("fds: %s, masked by %q: %s", fds.Verdict, fds.MaskedBy, fds.Reason)
	if fds.Verdict == "leak" {
		t.Errorf("fds %s (masked by %q, %.3g fds/request); want no leak", fds.Verdict, fds.MaskedBy, fds.PerRequest)
	}
}

// A prefork worker that leaks an fd every 5 requests under the same
// pile-up is still found, at its own rate. Every 10 requests, a worker's
// 150-request life grew by 53 % of its own fds in a run starved under
// -race and bench/busy.sh (lives of 1 s, 15 % of requests reset), under
// the transient rule's bar (a life that grew by less than its own size
// may be a runtime sizing itself), and the test failed; every 5 doubles
// that growth.
func TestEndToEndFDLeakUnderPilingUpIsFound(t *testing.T) {
	t.Parallel()
	rep, out := soakSlowing(t, "--leak-bytes", "0", "--leak-fd-every", "5")
	fds := rep.Resources["fds"]
	t.Logf("fds: %s, masked by %q: %s", fds.Verdict, fds.MaskedBy, fds.Reason)
	if fds.Verdict != "leak" || fds.PerRequest < 0.1 || fds.PerRequest > 0.3 {
		skipIfSamplesStalled(t, rep, out, 200*time.Millisecond)
	}
	if fds.Verdict != "leak" || fds.MaskedBy != "recycling" {
		t.Fatalf("fds %s masked by %q; want a leak masked by recycling", fds.Verdict, fds.MaskedBy)
	}
	if fds.PerRequest < 0.1 || fds.PerRequest > 0.3 {
		t.Errorf("fds per_request = %.3g; want about 0.2 (an fd every 5 requests)", fds.PerRequest)
	}
}

// skipIfSamplesStalled declines a run whose sampler, asked to sample
// every interval, took too few samples for the lives rule, a machine's
// other work holding soakd off the cores:
//   - fewer than a third of those asked in the soak (under bench/busy.sh
//     at load 16: 10 samples in a 23.8 s soak, and a third of the
//     requests reset by the starved server);
//   - or fewer than minSampledLife samples in the median life of the
//     processes replaced during the soak (out is the run's --out
//     directory, whose procs.csv lists them). The rule fits the last two
//     thirds of each life, and leaves out a life of fewer than 4: lives
//     of 2–4 samples read a third of the leak, or none. Under -race, two
//     of these tests at once beside bench/busy.sh: replaced lives of a
//     median 2.5 and 4 samples (17 and 23 soak samples of about 75 asked,
//     over a third for the second) read the leak inconclusive and 0.038
//     fds/request; lives of 8–13 read it at 0.085–0.107 in 18 runs of 19
//     (the 19th, at 8, fell to the transient rule: its typical life grew
//     by 97 % of its own size). A CI run failed at 31 samples of 72.
func skipIfSamplesStalled(t *testing.T, rep *model.Report, out string, interval time.Duration) {
	t.Helper()
	p := rep.Phases
	want := p.SoakSeconds / interval.Seconds()
	stalled := p.SoakSamples > 0 && float64(p.SoakSamples) < want/3
	lives, per := replacedLifeSamples(readBack(t, out))
	if stalled || (lives > 0 && per < minSampledLife) {
		t.Skipf("the machine was too busy: %d soak samples in %.1f s where every %s was asked (%.0f); the %d processes replaced in the soak held a median of %.1f samples each (this test judges from %d): %s",
			p.SoakSamples, p.SoakSeconds, interval, want, lives, per, minSampledLife, rep.Resources["fds"].Reason)
	}
}

// minSampledLife is the fewest soak samples in the median replaced life
// for which skipIfSamplesStalled lets a run be judged: with 5, the lives
// rule fits each life's last 4 (verdict's minLifePoints).
const minSampledLife = 5

// replacedLifeSamples counts the processes first seen after the soak's
// first sample (replaced during it) and the median number of soak samples
// each was seen in.
func replacedLifeSamples(recs []model.Record) (int, float64) {
	type id struct {
		pid   int32
		start uint64
	}
	first := true
	before := map[id]bool{}
	seen := map[id]int{}
	for _, r := range recs {
		if r.Phase != verdict.Soak || !r.Alive {
			continue
		}
		for _, m := range r.Members {
			k := id{m.PID, m.Start}
			if first {
				before[k] = true
			} else if !before[k] {
				seen[k]++
			}
		}
		first = false
	}
	var n []float64
	for _, c := range seen {
		n = append(n, float64(c))
	}
	if len(n) == 0 {
		return 0, 0
	}
	sort.Float64s(n)
	return len(n), (n[(len(n)-1)/2] + n[len(n)/2]) / 2
}
