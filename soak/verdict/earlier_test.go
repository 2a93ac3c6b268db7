package verdict

import (
	"strings"
	"testing"
)

// shifted returns pts with every value raised by by: the same run of a
// process that had grown by that much before it.
func shifted(pts []Point, by float64) []Point {
	out := make([]Point, len(pts))
	for i, p := range pts {
		p.Value += by
		out[i] = p
	}
	return out
}

// flatRun is a short run of a process that does not grow: level with a
// page of jitter (goShortRun without the slope).
func flatRun(seed uint64, level float64) []Point {
	return shifted(goShortRun(seed, 9, 0), level-7*mib)
}

// TestEarlierLevelJudgesTheTransientRule: a later short run of a process
// that has grown from 7 to 30 MiB since soakd first saw it reads
// inconclusive on its own (it grew less than its 30 MiB at this load's
// start) and a leak against the first-seen 7 MiB.
func TestEarlierLevelJudgesTheTransientRule(t *testing.T) {
	for seed := range uint64(10) {
		pts := shifted(goShortRun(seed, 9, 2800), 23*mib)
		alone := AnalyzeResource(pts, rss)
		if alone.Verdict != Inconclusive || !strings.Contains(alone.Reason, "at the load's start") {
			t.Fatalf("seed %d alone: got %s (%s); want inconclusive by the transient rule", seed, alone.Verdict, alone.Reason)
		}
		opt := rss
		opt.Earlier = &Earlier{Level: 7 * mib, Process: "pid 42"}
		seen := AnalyzeResource(pts, opt)
		if seen.Verdict != Leak || seen.CarriedFromRun != 0 {
			t.Fatalf("seed %d seen at 7 MiB: got %s carried %d (%s); want a leak of this run's own", seed, seen.Verdict, seen.CarriedFromRun, seen.Reason)
		}
		if seen.FirstSeenLevel != 7*mib || !strings.Contains(seen.Reason, "past twice the 7 MiB it had when soakd first saw the process") {
			t.Errorf("seed %d: first_seen_level %.0f, reason %q; want 7 MiB, named", seed, seen.FirstSeenLevel, seen.Reason)
		}
	}
}

// TestEarlierLevelAboveHalfStaysTransient: a first-seen level that the
// process has not yet doubled keeps the rule's answer, and says which
// level it used.
func TestEarlierLevelAboveHalfStaysTransient(t *testing.T) {
	opt := rss
	opt.Earlier = &Earlier{Level: 8 * mib}
	res := AnalyzeResource(shifted(goShortRun(1, 9, 2800), 2*mib), opt)
	if res.Verdict != Inconclusive || !strings.Contains(res.Reason, "when soakd first saw the process") {
		t.Fatalf("got %s (%s); want inconclusive against the first-seen level", res.Verdict, res.Reason)
	}
}

// TestLeakCarriedWhileGrowthGoesOn covers the carry rule: a leak decided
// in an earlier run of the process stays while this run grows, and turns
// on a flat run or a fall; without a decided leak nothing is carried.
func TestLeakCarriedWhileGrowthGoesOn(t *testing.T) {
	falling := goShortRun(3, 9, -2800)
	for i := range falling {
		falling[i].Value += 20 * mib
	}
	for _, tc := range []struct {
		name    string
		pts     []Point
		leakRun int64
		want    string
		carried int64
	}{
		{"growing, undecided alone", goShortRun(2, 9, 2800), 3, Leak, 3},
		{"growing, no leak before", goShortRun(2, 9, 2800), 0, Inconclusive, 0},
		{"flat", flatRun(4, 30*mib), 3, Stable, 0},
		{"falling", falling, 3, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := rss
			opt.Earlier = &Earlier{LeakRun: tc.leakRun, Process: "pid 42"}
			res := AnalyzeResource(tc.pts, opt)
			if tc.want != "" && res.Verdict != tc.want {
				t.Errorf("verdict = %s (%s); want %s", res.Verdict, res.Reason, tc.want)
			}
			if res.Verdict == Leak && tc.carried == 0 {
				t.Errorf("verdict = leak (%s); want none carried", res.Reason)
			}
			if res.CarriedFromRun != tc.carried {
				t.Errorf("carried_from_run = %d; want %d", res.CarriedFromRun, tc.carried)
			}
			if tc.carried > 0 && !strings.HasPrefix(res.Reason, "leak decided in run 3 of the same process (pid 42)") {
				t.Errorf("reason = %q; want it to name the run and the process", res.Reason)
			}
		})
	}
}

// TestJoinRunCountsOn: a run's soak points join the earlier runs' soak
// with their requests and seconds counted on from its end; the run's
// other points stay out.
func TestJoinRunCountsOn(t *testing.T) {
	earlier := []Point{{Phase: Baseline, Value: 1}, {Phase: Soak, Requests: 0, Seconds: 0}, {Phase: Soak, Requests: 100, Seconds: 10}}
	run := []Point{{Phase: Baseline, Requests: 0, Seconds: 1}, {Phase: Soak, Requests: 5, Seconds: 3}, {Phase: Soak, Requests: 55, Seconds: 8}, {Phase: Cooldown, Requests: 55, Seconds: 9}}
	got := joinRun(earlier, run)
	if len(got) != 5 {
		t.Fatalf("got %d points; want 5: %+v", len(got), got)
	}
	if a, b := got[3], got[4]; a.Requests != 100 || a.Seconds != 10 || b.Requests != 150 || b.Seconds != 15 {
		t.Errorf("joined points %+v, %+v; want requests 100 and 150 at 10 s and 15 s", a, b)
	}
}

// TestGrowthAcrossRuns: four short runs of one leaking process each grow
// less than their own level at the load's start (inconclusive alone),
// and their soaks joined decide the leak.
func TestGrowthAcrossRuns(t *testing.T) {
	var joined []Point
	var level float64
	for run := range 3 {
		pts := shifted(goShortRun(uint64(run), 9, 2800), level)
		if run == 0 {
			joined = append(joined, baselineOnly(pts)...)
		}
		joined = joinRun(joined, pts)
		level = pts[len(pts)-1].Value - 7*mib
	}
	this := shifted(goShortRun(9, 9, 2800), level)
	alone := AnalyzeResource(this, rss)
	if alone.Verdict != Inconclusive {
		t.Fatalf("alone: got %s (%s); want inconclusive", alone.Verdict, alone.Reason)
	}
	opt := rss
	opt.Earlier = &Earlier{Points: joined, Runs: 3, Process: "pid 42"}
	res := AnalyzeResource(this, opt)
	if res.Verdict != Leak || res.AcrossRuns != 4 || !strings.HasPrefix(res.Reason, "growth across the 4 runs of the same process (pid 42)") {
		t.Fatalf("got %s across %d runs (%s); want a leak across 4 runs", res.Verdict, res.AcrossRuns, res.Reason)
	}
	if res.PerRequest < 2500 || res.PerRequest > 3100 {
		t.Errorf("per request %.0f B; want about 2800", res.PerRequest)
	}
}

func baselineOnly(pts []Point) []Point {
	var out []Point
	for _, p := range pts {
		if p.Phase == Baseline {
			out = append(out, p)
		}
	}
	return out
}
