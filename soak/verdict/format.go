package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/units"
)

// reason writes the one-sentence reason for a decision.
func reason(opt ResourceOptions, res Resource, f fit, d decision, cool *release, fl floors) string {
	u, th := opt.Unit, opt.Thresholds
	slope := perReq(f.whole.Slope, u) + " (95 % CI " + ciText(f.whole.Lo, f.whole.Hi, u) + ")"
	var s string
	switch d.why {
	case whyLeak:
		if d.tail != nil {
			s = fmt.Sprintf("%s %s (95 %% CI %s) after the growth slowed, %s, %s, straight from there on: a warm-up that outlasted its phase, with a leak under it",
				opt.Name, perReq(d.tail.slope, u), ciText(d.tail.lo, d.tail.hi, u), pText(res.PValue), perDayText(res.PerDay, th, u))
		} else {
			// The whole soak's interval decided, and its p-value goes
			// with it; the second half's own slope is named after
			// them when its interval reaches outside the whole
			// soak's as printed, said to be the second half's alone.
			s = fmt.Sprintf("%s %s (95 %% CI %s), %s, %s, growing through the last third",
				opt.Name, perReq(f.whole.Slope, u), ciText(f.whole.Lo, f.whole.Hi, u), f.pText(), perDayText(res.PerDay, th, u))
			if h := res.SecondHalf; h != nil && (h.CI95[0] < f.whole.Lo || h.CI95[1] > f.whole.Hi) &&
				ciText(math.Min(h.CI95[0], f.whole.Lo), math.Max(h.CI95[1], f.whole.Hi), u) != ciText(f.whole.Lo, f.whole.Hi, u) {
				s += fmt.Sprintf(" (the second half alone %s, 95 %% CI %s)", perReq(h.PerRequest, u), ciText(h.CI95[0], h.CI95[1], u))
			}
		}
		s += cooldownText(cool, u)
		if res.FirstSeenLevel > 0 {
			s += ", past twice the " + amount(res.FirstSeenLevel, u) + " it had when soakd first saw the process, in an earlier run"
		}
		if tte := res.TimeToExhaustionSeconds; tte != nil {
			s += ", reaching the " + amount(res.Limit, u) + " limit in about " + secs(*tte)
		}
	case whyLeakSlowing:
		s = fmt.Sprintf("%s %s (95 %% CI %s) after the growth slowed at request %s (%s into the run), from %s before, %s, %s: slowing but still leaking, the soak's last third clearing %s too",
			opt.Name, perReq(d.tail.slope, u), ciText(d.tail.lo, d.tail.hi, u), group(res.ChangeAtRequest), secs(res.ChangeAtSeconds), perReq(d.before, u), pText(res.PValue), perDayText(res.PerDay, th, u), fl.binding(th, u))
		if g := d.goesOn; g != nil {
			s = fmt.Sprintf("%s %s (95 %% CI %s) after the growth slowed at request %s (%s into the run), from %s before, %s, %s: slowing but still leaking, one slowdown and then straight growth fitting the soak better than any cache that fills or creep that slows while staying under %s over the next %s (by ΔBIC %.1f on %.0f effective points, %d asked)",
				opt.Name, perReq(d.tail.slope, u), ciText(d.tail.lo, d.tail.hi, u), group(res.ChangeAtRequest), secs(res.ChangeAtSeconds), perReq(d.before, u), pText(res.PValue), perDayText(res.PerDay, th, u), fl.binding(th, u), secs(th.Horizon), g.dBIC, g.me, stopMargin)
		}
		s += cooldownText(cool, u)
		if tte := res.TimeToExhaustionSeconds; tte != nil {
			s += ", reaching the " + amount(res.Limit, u) + " limit in about " + secs(*tte)
		}
	case whyLate:
		s = fmt.Sprintf("%s %s (95 %% CI %s) since growth began at request %s (%s into the run), from %s before, %s, %s",
			opt.Name, perReq(d.tail.slope, u), ciText(d.tail.lo, d.tail.hi, u), group(res.ChangeAtRequest), secs(res.ChangeAtSeconds), perReq(d.before, u), pText(res.PValue), perDayText(res.PerDay, th, u))
		s += cooldownText(cool, u)
		if tte := res.TimeToExhaustionSeconds; tte != nil {
			s += ", reaching the " + amount(res.Limit, u) + " limit in about " + secs(*tte)
		}
	case whyTransient:
		grew := fmt.Sprintf("it reached %s, not yet twice its %s %s", amount(f.end, u), amount(d.level, u), levelWhen(d.seen))
		past := 2 * d.level
		if d.size > 0 {
			// A part of the tree's memory: judged against the tree's size.
			grew = fmt.Sprintf("it reached %s, not yet its %s %s plus the process tree's size (its RSS's %s)", amount(f.end, u), amount(d.level, u), levelWhen(d.seen), amount(d.size, u))
			past = d.level + d.size
		}
		s = fmt.Sprintf("%s %s, %s, but in a soak of only %s %s: a runtime sizing itself to the load (a heap before its first collections, pools, arenas) grows as much and then stops; a soak of %s, or growth past %s, tells them apart",
			opt.Name, perReq(res.PerRequest, u)+" (95 % CI "+ciText(res.CI95[0], res.CI95[1], u)+")", leakP(res, f, d), secs(f.seconds), grew, secs(th.Transient), amount(past, u))
	case whyReleased:
		s = fmt.Sprintf("%s grew %s under load, %s, but was released after %s idle: %s", opt.Name, slope, f.pText(), secs(cool.idle), cool.text(u))
	case whyPlateau:
		s = fmt.Sprintf("%s grew %s then levelled off: %s after the knot (95 %% CI %s) against %s before, like a cache or warm-up",
			opt.Name, amount(f.end-f.start, u), perReq(d.tail.slope, u), ciText(d.tail.lo, d.tail.hi, u), perReq(f.sub(0, f.shape.at+1).Slope, u))
	case whySlowing:
		s = fmt.Sprintf("%s %s, %s, but the growth is slowing: %s after the knot (95 %% CI %s), and slowing at that pace it may level off before it adds %s per %s; too soon to tell a leak from a plateau",
			opt.Name, slope, f.pText(), perReq(d.tail.slope, u), ciText(d.tail.lo, d.tail.hi, u), amount(th.HorizonGrowth, u), secs(th.Horizon))
	case whyStep:
		s = fmt.Sprintf("%s stepped up %s once and is otherwise %s", opt.Name, amount(f.shape.size, u), map[bool]string{true: "flat", false: "unclear"}[d.verdict == Stable])
	case whyStairs:
		s = fmt.Sprintf("%s climbed %s in %d steps: growth in chunks that may go on; run as long again to see whether the steps keep coming",
			opt.Name, amount(f.shape.size, u), f.shape.steps)
		if f.shape.smooth {
			// Levels fit it better than a line, but not better than a
			// slope that changes, or not in sharp jumps: growth whose
			// rate changed (stairsOverHinge).
			s = fmt.Sprintf("%s grew %s, %s, faster in some stretches than in others (no sharp jumps, and where it began to grow faster does not decide a leak on its own): growth that may go on; run as long again to see whether it does",
				opt.Name, slope, f.pText())
		}
	case whyFlat:
		s = fmt.Sprintf("%s stable: %s, the interval within %s either way", opt.Name, slope, fl.binding(th, u))
	case whyExact:
		e := res.Exact
		moved := amount(e.Gained, u) + " gained"
		if e.Lost > 0 {
			moved = amount(e.Lost, u) + " given back"
		}
		s = fmt.Sprintf("%s stable by its readings alone: %s from the start's level to the end's, over %s requests, so %s to %s (exact: a bound from the whole %s, not a 95 %% CI; at most %s), the upper end under %s",
			opt.Name, moved, group(e.Over), perReq(res.CI95[0], u), perReq(res.CI95[1], u),
			quantaName(f.quantum, u), perDayText(res.BoundPerDay, th, u), fl.binding(th, u))
	case whyRecent:
		r := d.recent
		s = fmt.Sprintf("%s %s over the whole soak, %s, but growth in the last %s requests (the last %s of the soak): %s (95 %% CI %s), %s, above %s; cannot call it stable; run longer",
			opt.Name, slope, f.pText(), group(math.Round(r.requests)), secs(r.share*f.seconds), perReq(r.fit.Slope, u), ciText(r.fit.Lo, r.fit.Hi, u), pText(slopeP(r.fit)), fl.binding(th, u))
	case whyFalling:
		s = fmt.Sprintf("%s stable, falling: %s, the interval under minus %s", opt.Name, slope, fl.binding(th, u))
	case whyWide:
		s = fmt.Sprintf("%s %s, %s: the interval lies under %s but reaches as far below minus it, so this soak proves neither flat nor falling; slow noise over a short soak pulls a slope this far either way, a leak's as well",
			opt.Name, slope, f.pText(), fl.binding(th, u))
	case whyShort:
		s = fmt.Sprintf("%s %s, %s, but the interval proves only %s in total (the estimate %s), under the %s total-growth floor", opt.Name, slope, f.pText(),
			amount(math.Max(f.provenGrowth(), 0), u), amount(f.fittedGrowth(), u), amount(th.MinTotal, u))
	case whySlow:
		s = fmt.Sprintf("%s %s, %s, %s, but slow: %s", opt.Name, slope, f.pText(), perDayText(res.PerDay, th, u), slowText(*d.slow, th, fl, u))
	case whyUnsure:
		s = fmt.Sprintf("%s %s, %s, but the last third (%s) has slowed to under half",
			opt.Name, slope, f.pText(), perReq(f.last.Slope, u))
	default:
		s = fmt.Sprintf("%s %s, %s: the interval neither clears nor lies under %s, the lowest floor in force", opt.Name, slope, f.pText(),
			fl.binding(th, u))
	}
	if res.Incarnations > 1 {
		s += fmt.Sprintf("; the target restarted (%d incarnations), the longest was fitted", res.Incarnations)
	}
	return s
}

// leakP gives a leak's p-value for a reason: the fit's, naming the sign
// test when it gave it, unless the stretch after a knot decided (its
// slope's own p).
func leakP(res Resource, f fit, d decision) string {
	if d.tail != nil {
		return pText(res.PValue)
	}
	return f.pText()
}

// boundText says a resource's BoundPerDay against its FloorPerDay (see
// Resource.Bound); "" when there is no bound.
func boundText(res Resource, d decision, th Thresholds) string {
	if res.BoundPerDay <= 0 {
		return ""
	}
	how := fmt.Sprintf("%.4g %%", 100*th.level()) // 95 %, or an until-decided look's level
	if res.Exact != nil {
		how = "exact"
	}
	after := ""
	if d.verdict == Plateau {
		after = " after levelling off"
	}
	return fmt.Sprintf("under %s%s (%s; the floor %s)", perDayText(res.BoundPerDay, th, res.Unit), after, how, amount(res.FloorPerDay, res.Unit))
}

// quantaName names a series' quanta: "pages" for memory, the unit
// otherwise.
func quantaName(q float64, unit string) string {
	if unit == "bytes" || unit == "" {
		return units.Sig3(q/1024) + " KiB pages"
	}
	return "counts"
}

// perDayText gives the growth over the horizon, e.g. "+1.2 GiB per 24 h
// at this throughput".
func perDayText(v float64, th Thresholds, unit string) string {
	sign := "+"
	if v < 0 {
		sign = ""
	}
	return sign + amount(v, unit) + " per " + secs(th.Horizon) + " at this throughput"
}

// livesReason explains a leak that recycling hid.
func livesReason(opt ResourceOptions, res Resource, lf livesFit) string {
	u := opt.Unit
	return fmt.Sprintf("%s %s (95 %% CI %s), %s, carried by the processes themselves: %d lives, %d replaced during the soak, each growing until replaced, so the tree's total stays bounded (masked by recycling); %s",
		opt.Name, perReq(lf.perRequest, u), ciText(lf.lo, lf.hi, u), pText(lf.p), lf.lives, lf.replaced, perDayText(res.PerDay, opt.Thresholds, u))
}

func cooldownText(cool *release, u string) string {
	switch {
	case cool == nil:
		return " (no cool-down ran)"
	case cool.ok:
		return ", released after " + secs(cool.idle) + " idle (" + cool.text(u) + ")"
	case cool.ci[0] < cool.bar:
		// The interval reaches under the bar without lying under it:
		// the cool-down neither shows the growth kept nor given back.
		return ", release not shown after " + secs(cool.idle) + " idle (" + cool.text(u) + ")"
	}
	return ", not released after " + secs(cool.idle) + " idle (" + cool.text(u) + ")"
}

// text gives the release test's figures, e.g. "the cool-down's median
// 0.2 MiB above the baseline's, 95 % CI −0.9–1.3 MiB, under a quarter of
// the 12 MiB it grew" (within a parenthesis, so none of its own).
func (r *release) text(u string) string {
	against := "the soak's start"
	if r.base {
		against = "the baseline's"
	}
	under := "not wholly under"
	if r.ok {
		under = "under"
	}
	return fmt.Sprintf("the cool-down's median %s %s %s, 95 %% CI %s, %s a quarter of the %s it grew",
		amount(math.Abs(r.level-r.ref), u), map[bool]string{true: "above", false: "below"}[r.level >= r.ref], against,
		ciText(r.ci[0], r.ci[1], u), under, amount(r.bar/releaseFraction, u))
}

// settleText turns a decision's extra requests into advice that names
// the constraint that binds: the interval's width against the lowest
// floor in force, the total-growth floor, or the transient rule's time.
func settleText(d decision, rph float64, th Thresholds, fl floors, unit string) string {
	more := d.more
	if more <= 0 || math.IsNaN(more) || math.IsInf(more, 0) {
		return ""
	}
	s := "run ≥ " + group(roundSig(more, 2)) + " more requests"
	if rph > 0 {
		s += " (about " + secs(more/rph*3600) + " at this throughput)"
	}
	switch d.bind {
	case bindRequests:
		s += ", so that the interval narrows enough to decide against " + fl.binding(th, unit)
	case bindLastThird:
		s += ", so that the soak's last third, not only the growth after the knot (95 % CI " + ciText(d.tail.lo, d.tail.hi, unit) + "), clears " + fl.binding(th, unit) + " on its own (one-sided 95 %)"
	case bindPace:
		s += ", so that the growth after the knot, whose interval (95 % CI " + ciText(d.tail.lo, d.tail.hi, unit) + ") already clears " + fl.binding(th, unit) + ", shows whether it keeps slowing: at the pace it slowed, it would add less than " + amount(th.HorizonGrowth, unit) + " per " + secs(th.Horizon)
	case bindTotal:
		s += ", so that the growth passes the " + amount(th.MinTotal, unit) + " total-growth floor"
	case bindTime:
		if d.size > 0 {
			s += ", so that the soak lasts " + secs(th.Transient) + " or grows by more than the process tree's size at the start"
		} else {
			s += ", so that the soak lasts " + secs(th.Transient) + " or grows past twice its level at the start"
		}
	}
	return s
}

// pText formats a p-value.
func pText(p float64) string {
	if p < 1e-9 {
		return "p < 1e-9"
	}
	if p >= 0.001 {
		return "p = " + strconv.FormatFloat(p, 'g', 2, 64)
	}
	e := int(math.Floor(math.Log10(p)))
	return "p = " + strconv.FormatFloat(p/math.Pow(10, float64(e)), 'f', 1, 64) + "e" + strconv.Itoa(e)
}

// perReq formats a signed per-request rate, e.g. "+101 B/request".
func perReq(v float64, unit string) string {
	sign := "+"
	if v < 0 {
		sign = "−"
	}
	return sign + perReqAbs(math.Abs(v), unit)
}

func perReqAbs(v float64, unit string) string {
	n, u := scaled(v, unit)
	return num(n) + " " + u + "/request"
}

// ciText formats an interval in the unit scale and precision of its
// larger end.
func ciText(lo, hi float64, unit string) string {
	f, u := scaleOf(math.Max(math.Abs(lo), math.Abs(hi)), unit)
	d := units.Decimals(math.Max(math.Abs(lo), math.Abs(hi)) / f)
	return signed(lo/f, d) + "–" + signed(hi/f, d) + " " + u
}

func signed(v float64, d int) string {
	s := digits(v, d)
	if strings.HasPrefix(s, "-") {
		return "−" + s[1:]
	}
	return s
}

// amount formats a quantity, e.g. "12 MiB" or "40 fds".
func amount(v float64, unit string) string {
	n, u := scaled(math.Abs(v), unit)
	if v < 0 {
		return "−" + num(n) + " " + u
	}
	return num(n) + " " + u
}

func scaled(v float64, unit string) (float64, string) {
	f, u := scaleOf(v, unit)
	return v / f, u
}

// scaleOf picks the unit of a figure of magnitude v, as everywhere in
// soakd (units.Scale): bytes in B to TiB (an empty unit is bytes), other
// units as they are.
func scaleOf(v float64, unit string) (float64, string) {
	if unit == "" {
		unit = "bytes"
	}
	return units.Scale(v, unit)
}

// num formats with three significant digits, trailing zeros trimmed,
// e.g. "101", "16", "10.4", "0.0913" (units.Sig3).
func num(v float64) string { return units.Sig3(v) }

// digits formats v with d decimals and trims trailing zeros.
func digits(v float64, d int) string {
	s := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func secs(s float64) string {
	switch {
	case s < 120:
		return digits(math.Round(s), 0) + " s"
	case s < 7200:
		return digits(math.Round(s/60), 0) + " min"
	case s < 72*3600:
		return num(s/3600) + " h"
	}
	return num(s/86400) + " days"
}

func roundSig(v float64, digits int) float64 {
	if v <= 0 {
		return v
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-float64(digits-1))
	return math.Ceil(v/p) * p
}

// group writes an integer with thin groups of three (units.Group).
func group(v float64) string { return units.Group(v) }

func itoa(n int) string { return strconv.Itoa(n) }

// plural gives a count and its noun, e.g. "1 soak sample", "0 soak
// samples".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}

// levelWhen says when the transient rule's level was measured.
func levelWhen(seen bool) string {
	if seen {
		return "when soakd first saw the process, in an earlier run"
	}
	return "at the load's start"
}

// slowText says why growth that clears the floor does not yet show that
// it goes on.
func slowText(s slowness, th Thresholds, fl floors, u string) string {
	switch s.by {
	case slowLastUnder:
		return fmt.Sprintf("the growth over the last cycle (%s, 95 %% CI %s) lies under %s: it may have stopped",
			perReq(s.last.Slope, u), ciText(s.last.Lo, s.last.Hi, u), fl.binding(th, u))
	case slowLevelling:
		if !s.paced {
			return fmt.Sprintf("it slowed from %s over the first half to %s over the second (95 %% one-sided), and the second half's growth (95 %% CI %s) does not clear %s by itself",
				perReq(s.h1, u), perReq(s.second.Slope, u), ciText(s.second.Lo, s.second.Hi, u), fl.binding(th, u))
		}
		return fmt.Sprintf("it slowed from %s over the first half to %s over the second, confidently from at least %s (95 %% one-sided), and slowing at that pace it would add less than %s per %s",
			perReq(s.h1, u), perReq(s.second.Slope, u), perReq(s.h1lo, u), amount(th.HorizonGrowth, u), secs(th.Horizon))
	case slowHalves:
		return fmt.Sprintf("the halves' growth (%s, 95 %% CI %s, then %s, 95 %% CI %s) does not yet show that it goes on (at this margin over %s each half must grow at 95 %% one-sided, the second reach %s and the last third go on)",
			perReq(s.first.Slope, u), ciText(s.first.Lo, s.first.Hi, u), perReq(s.last.Slope, u), ciText(s.last.Lo, s.last.Hi, u),
			fl.binding(th, u), perReqAbs(s.bar, u))
	}
	return fmt.Sprintf("the growth over the last third (%s, 95 %% CI %s) does not yet show that it goes on (at this margin over %s it must clear %s at %.0f %% one-sided)",
		perReq(s.last.Slope, u), ciText(s.last.Lo, s.last.Hi, u), fl.binding(th, u), perReqAbs(s.bar, u), 100*s.conf)
}
