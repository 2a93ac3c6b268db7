package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/trend"
	"github.com/soakd/soakd/soak/units"
)

// Verdicts of the requests' health (Health.Verdict).
const (
	HealthOK      = "ok"
	HealthFailing = "failing"
	// Inconclusive (shared with the resources) is the third: too few
	// requests to judge.
)

// HealthThresholds say when failed requests make a run failing. A run is
// failing when, over the load (warm-up and soak):
//   - more than MaxRate of its requests failed (and at least MinErrors of
//     at least MinRequests), or every request failed;
//   - any window of Window seconds holds more than MaxWindowRate failed
//     requests, counting only windows of at least MinWindowRequests;
//   - or the error rate rises: errors per request grow, significantly
//     (Mann–Kendall at Alpha, corrected for autocorrelation), and the
//     last third's rate is above RisingFloor and above the first third's.
//
// A zero field takes its default from DefaultHealth.
type HealthThresholds struct {
	MaxRate       float64 // share of requests, default 0.01
	MaxWindowRate float64 // share of a window's requests, default 0.10
	Window        float64 // seconds, default 60
	// MinWindowRequests: a window with fewer requests is not judged, so
	// one failed request in a slow window does not fail a run.
	MinWindowRequests uint64
	// MinRequests and MinErrors: a run with fewer requests is
	// inconclusive (unless every request failed), and fewer errors than
	// MinErrors never make the total rate failing.
	MinRequests uint64
	MinErrors   uint64
	// Alpha is the significance of the rising test, default 0.001 (the
	// leaks'): with the floors beside it, a constant or bursty rate under
	// 1 % never read as rising in 200 seeded runs, and one that wanders
	// (AR(1) in its log) did in 1.5 % (TestHealthFalseAlarmsAndMisses).
	Alpha       float64
	RisingFloor float64 // the last third's rate must exceed it, default 0.001
	// MaxUnavailable: the run is failing when the target answered
	// nothing (HealthInput.Outages) for longer than this many seconds in
	// all. Zero takes MaxUnavailableShare of the load, and never less
	// than Timeout: at low concurrency a freeze costs few requests, but
	// it is a full outage while it lasts.
	MaxUnavailable      float64
	MaxUnavailableShare float64 // default 0.01
	Timeout             float64 // the load's request timeout, seconds; 0 = not known
}

// DefaultHealth are the default thresholds of the requests' health.
var DefaultHealth = HealthThresholds{MaxRate: 0.01, MaxWindowRate: 0.10, Window: 60,
	MinWindowRequests: 20, MinRequests: 20, MinErrors: 3, Alpha: 0.001, RisingFloor: 0.001,
	MaxUnavailableShare: 0.01}

// withDefaults fills t's zero fields from DefaultHealth.
func (t HealthThresholds) withDefaults() HealthThresholds {
	d := DefaultHealth
	fill := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&t.MaxRate, d.MaxRate)
	fill(&t.MaxWindowRate, d.MaxWindowRate)
	fill(&t.Window, d.Window)
	fill(&t.Alpha, d.Alpha)
	fill(&t.RisingFloor, d.RisingFloor)
	fill(&t.MaxUnavailableShare, d.MaxUnavailableShare)
	for _, p := range []struct {
		v   *uint64
		def uint64
	}{
		{&t.MinWindowRequests, d.MinWindowRequests}, {&t.MinRequests, d.MinRequests}, {&t.MinErrors, d.MinErrors},
	} {
		if *p.v == 0 {
			*p.v = p.def
		}
	}
	return t
}

// HealthPoint is one sample of the load's cumulative counters.
type HealthPoint struct {
	Seconds  float64 // since the run started
	Requests uint64  // cumulative completed requests
	Errors   uint64  // cumulative failed requests
	Phase    Phase
}

// HealthInput is what AnalyzeHealth judges.
type HealthInput struct {
	// Points are the run's samples in time order. Only the load's
	// (warm-up and soak) count; the last baseline sample marks the load's
	// start, and the first cool-down sample holds the load's last counts.
	Points []HealthPoint
	// Requests and Errors are the load's totals when known (the load's
	// summary); zero takes them from the points.
	Requests, Errors uint64
	// Causes are the errors by cause, with example texts.
	Causes []Cause
	// Outages are the stretches in which the target answered nothing,
	// on the points' scale (seconds since the run started).
	Outages    []Outage
	Thresholds HealthThresholds
}

// Outage is a stretch in which the target answered nothing: stopped
// (SIGSTOP or a debugger, no request completed meanwhile) or stalled (no
// answer and no byte for longer than the request timeout while requests
// timed out). In HealthInput its times are on the points' scale; in
// Health, from the load's start.
type Outage struct {
	FromSeconds float64 `json:"from_seconds"`
	ToSeconds   float64 `json:"to_seconds"`
	Why         string  `json:"why"` // OutageStopped or OutageStalled
}

// Why the target answered nothing (Outage.Why).
const (
	OutageStopped = "stopped"
	OutageStalled = "stalled"
)

// Unavailability is the time the target answered nothing during the
// load, against the most allowed.
type Unavailability struct {
	Seconds    float64  `json:"seconds"`     // the outages' union within the load
	Share      float64  `json:"share"`       // of the load's seconds
	MaxSeconds float64  `json:"max_seconds"` // the most allowed (HealthThresholds.MaxUnavailable)
	Outages    []Outage `json:"outages"`     // merged, in time order, from the load's start
}

// Health is the verdict on the requests: the report's "requests" object.
// Its times are in seconds since the load started.
type Health struct {
	Verdict  string  `json:"verdict"` // "ok", "failing" or "inconclusive"
	Requests uint64  `json:"requests"`
	Errors   uint64  `json:"errors"`
	Rate     float64 `json:"rate"` // Errors / Requests
	// MaxRate, MaxWindowRate and WindowSeconds are the thresholds judged
	// against.
	MaxRate       float64 `json:"max_rate"`
	MaxWindowRate float64 `json:"max_window_rate"`
	WindowSeconds float64 `json:"window_seconds"`
	// WorstWindow is the window with the highest error rate among those
	// with enough requests; nil when none has.
	WorstWindow *ErrorWindow `json:"worst_window,omitempty"`
	// FirstErrorSeconds and LastErrorSeconds bound the errors: the start
	// of the first sample interval that holds one and the end of the
	// last; nil without errors. ErrorsToEnd: no request completed after
	// the last error, or it came in the load's last second (or its last
	// 1 %, when longer).
	FirstErrorSeconds *float64    `json:"first_error_seconds,omitempty"`
	LastErrorSeconds  *float64    `json:"last_error_seconds,omitempty"`
	ErrorsToEnd       bool        `json:"errors_to_end,omitempty"`
	LoadSeconds       float64     `json:"load_seconds"`
	Causes            []Cause     `json:"causes,omitempty"`
	Trend             *ErrorTrend `json:"trend,omitempty"`
	// Unavailable is the time the target answered nothing; nil when it
	// always answered.
	Unavailable *Unavailability `json:"unavailable,omitempty"`
	Failing     []string        `json:"failing_by,omitempty"` // "rate", "window", "rising", "all", "unavailable"
	Reason      string          `json:"reason"`
}

// ErrorWindow is a stretch of the load and its requests.
type ErrorWindow struct {
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
	Requests     uint64  `json:"requests"`
	Errors       uint64  `json:"errors"`
	Rate         float64 `json:"rate"`
}

// Cause is one cause of failed requests (a load error cause, e.g.
// "status_mismatch") with its first distinct texts.
type Cause struct {
	Cause    string    `json:"cause"`
	Count    uint64    `json:"count"`
	Examples []Example `json:"examples,omitempty"`
}

// Example is one distinct error text of a cause.
type Example struct {
	Text  string `json:"text"`
	Count uint64 `json:"count"`
}

// ErrorTrend is the test of a rising error rate: the error rate of bins
// of about equal request counts, fitted against the cumulative requests.
type ErrorTrend struct {
	Bins int `json:"bins"`
	// PerRequestSlope is the Theil–Sen slope of the bins' error rate per
	// request served, CI95 its interval (widened for autocorrelation).
	PerRequestSlope float64    `json:"per_request_slope"`
	CI95            [2]float64 `json:"ci95"`
	PValue          float64    `json:"p_value"` // one-sided, of an increase
	FirstThirdRate  float64    `json:"first_third_rate"`
	LastThirdRate   float64    `json:"last_third_rate"`
	Rising          bool       `json:"rising"`
}

// Failing ways (Health.Failing).
const (
	FailingAll    = "all"
	FailingRate   = "rate"
	FailingWindow = "window"
	FailingRising = "rising"
	// FailingUnavailable: the target answered nothing for longer than
	// HealthThresholds.MaxUnavailable.
	FailingUnavailable = "unavailable"
)

// AnalyzeHealth judges the requests of a run: their error rate overall,
// in windows of time, and its trend. See HealthThresholds for the rule.
func AnalyzeHealth(in HealthInput) Health {
	t := in.Thresholds.withDefaults()
	iv := loadIntervals(in.Points)
	h := Health{MaxRate: t.MaxRate, MaxWindowRate: t.MaxWindowRate, WindowSeconds: t.Window, Causes: in.Causes}
	h.Requests, h.Errors = totals(iv, in.Requests, in.Errors)
	if h.Requests > 0 {
		h.Rate = float64(h.Errors) / float64(h.Requests)
	}
	h.LoadSeconds = iv.seconds()
	h.errorSpan(iv)
	h.WorstWindow = worstWindow(iv, t)
	h.Trend = errorTrend(iv, t)
	h.Unavailable = unavailability(in.Outages, iv, t)
	h.judge(t)
	return h
}

// unavailability merges the outages, clipped to the load, and sums them;
// nil when there are none within it.
func unavailability(outs []Outage, iv intervals, t HealthThresholds) *Unavailability {
	load := iv.seconds()
	var in []Outage
	for _, o := range outs {
		from, to := math.Max(o.FromSeconds-iv.t0, 0), math.Min(o.ToSeconds-iv.t0, load)
		if to > from {
			in = append(in, Outage{FromSeconds: from, ToSeconds: to, Why: o.Why})
		}
	}
	if len(in) == 0 {
		return nil
	}
	slices.SortFunc(in, func(a, b Outage) int { return cmp.Compare(a.FromSeconds, b.FromSeconds) })
	merged := in[:1]
	for _, o := range in[1:] {
		last := &merged[len(merged)-1]
		if o.FromSeconds <= last.ToSeconds {
			if o.ToSeconds > last.ToSeconds {
				last.ToSeconds = o.ToSeconds
			}
			if last.Why != o.Why && !strings.Contains(last.Why, o.Why) {
				last.Why += " and " + o.Why
			}
			continue
		}
		merged = append(merged, o)
	}
	u := &Unavailability{Outages: merged, MaxSeconds: t.MaxUnavailable}
	for _, o := range merged {
		u.Seconds += o.ToSeconds - o.FromSeconds
	}
	if load > 0 {
		u.Share = u.Seconds / load
	}
	if u.MaxSeconds <= 0 {
		u.MaxSeconds = math.Max(t.MaxUnavailableShare*load, t.Timeout)
	}
	return u
}

// unavailable: the target answered nothing for longer than allowed.
func (h *Health) unavailable() bool {
	return h.Unavailable != nil && h.Unavailable.Seconds > h.Unavailable.MaxSeconds
}

// judge sets the verdict, the ways it fails and the reason.
func (h *Health) judge(t HealthThresholds) {
	switch {
	case h.Requests == 0 && h.unavailable():
		h.Failing = []string{FailingUnavailable}
		h.Verdict = HealthFailing
		h.Reason = h.reason(t)
		return
	case h.Requests == 0:
		h.Verdict, h.Reason = Inconclusive, "no requests completed"
		return
	case h.Errors == h.Requests:
		h.Failing = []string{FailingAll}
	}
	if h.unavailable() {
		h.Failing = append(h.Failing, FailingUnavailable)
	}
	enough := h.Requests >= t.MinRequests && h.Errors >= t.MinErrors
	if h.Rate > t.MaxRate && enough && len(h.Failing) == 0 {
		h.Failing = append(h.Failing, FailingRate)
	}
	if w := h.WorstWindow; w != nil && w.Rate > t.MaxWindowRate && !h.wholeLoad(w) {
		h.Failing = append(h.Failing, FailingWindow) // a window of the whole load says no more than the rate
	}
	if h.Trend != nil && h.Trend.Rising {
		h.Failing = append(h.Failing, FailingRising)
	}
	switch {
	case len(h.Failing) > 0:
		h.Verdict = HealthFailing
	case h.Requests < t.MinRequests || (h.Rate > t.MaxRate && !enough):
		h.Verdict = Inconclusive
	default:
		h.Verdict = HealthOK
	}
	h.Reason = h.reason(t)
}

// wholeLoad tells whether w spans the whole load: a load no longer than
// a window.
func (h *Health) wholeLoad(w *ErrorWindow) bool {
	return w.StartSeconds == 0 && w.EndSeconds == h.LoadSeconds
}

// reason says the verdict in a sentence: for a failing run, the headline
// that the report's first line carries.
func (h *Health) reason(t HealthThresholds) string {
	failed := fmt.Sprintf("%d of %d requests failed (%s)", h.Errors, h.Requests, Percent(h.Rate))
	switch h.Verdict {
	case HealthOK:
		return fmt.Sprintf("%s, within %s; no %s above %s", failed, Percent(t.MaxRate),
			windowName(t.Window), Percent(t.MaxWindowRate))
	case Inconclusive:
		if h.Requests < t.MinRequests {
			return fmt.Sprintf("%s: too few requests to judge (want at least %d)", failed, t.MinRequests)
		}
		return fmt.Sprintf("%s: above %s, but too few errors to call it failing (want at least %d)", failed, Percent(t.MaxRate), t.MinErrors)
	}
	var parts []string
	if slices.Contains(h.Failing, FailingUnavailable) {
		parts = append(parts, h.Unavailable.text(h.LoadSeconds))
	}
	if slices.Contains(h.Failing, FailingRising) {
		tr := h.Trend
		parts = append(parts, fmt.Sprintf("degrading: the error rate rose from %s to %s (p = %.2g)",
			Percent(tr.FirstThirdRate), Percent(tr.LastThirdRate), tr.PValue))
	}
	parts = append(parts, failed)
	if c := h.causes(); c != "" {
		parts = append(parts, c)
	}
	if w := h.WorstWindow; slices.Contains(h.Failing, FailingWindow) && !slices.Contains(h.Failing, FailingAll) {
		parts = append(parts, fmt.Sprintf("worst %s: %d of %d failed (%s) from %s to %s", windowName(t.Window),
			w.Errors, w.Requests, Percent(w.Rate), seconds(w.StartSeconds), seconds(w.EndSeconds)))
	}
	s := strings.Join(parts, "; ")
	if h.FirstErrorSeconds != nil {
		end := "to the end"
		if !h.ErrorsToEnd {
			end = "to " + seconds(*h.LastErrorSeconds)
		}
		s += fmt.Sprintf("; errors from %s %s", seconds(*h.FirstErrorSeconds), end)
	}
	return s
}

// text words an unavailability that fails a run: "unavailable for 8 s of
// the 25 s load (32 %, more than the 1 s allowed): stopped from 5.1 s to
// 13.1 s".
func (u *Unavailability) text(load float64) string {
	var spans []string
	for _, o := range u.Outages[:min(len(u.Outages), 3)] {
		spans = append(spans, fmt.Sprintf("%s from %s to %s", o.Why, seconds(o.FromSeconds), seconds(o.ToSeconds)))
	}
	if n := len(u.Outages) - 3; n > 0 {
		spans = append(spans, fmt.Sprintf("%d more", n))
	}
	return fmt.Sprintf("unavailable for %s of the %s load (%s, more than the %s allowed): %s",
		seconds(u.Seconds), seconds(load), Percent(u.Share), seconds(u.MaxSeconds), strings.Join(spans, ", "))
}

// causes lists the leading causes (at most 3) with one example each.
func (h *Health) causes() string {
	cs := slices.Clone(h.Causes)
	slices.SortStableFunc(cs, func(a, b Cause) int { return compareDesc(a.Count, b.Count) })
	var parts []string
	for _, c := range cs[:min(len(cs), 3)] {
		if c.Count == 0 {
			continue
		}
		s := fmt.Sprintf("%s %d", c.Cause, c.Count)
		if len(c.Examples) > 0 {
			s += fmt.Sprintf(" (e.g. %q)", c.Examples[0].Text)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func compareDesc(a, b uint64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Percent writes a share as a percentage with up to 3 significant digits:
// "100 %", "0.9 %", "0.0123 %".
func Percent(f float64) string {
	if f == 0 {
		return "0 %"
	}
	return units.Sig3(100*f) + " %"
}

// seconds writes a time in the load: "0 s", "12.5 s", "250 s", "2.5 h".
func seconds(s float64) string {
	switch {
	case s >= 3*3600:
		return units.Sig3(s/3600) + " h"
	case s >= 100:
		return fmt.Sprintf("%.0f s", s)
	}
	return strconv.FormatFloat(math.Round(10*s)/10, 'f', -1, 64) + " s"
}

func windowName(w float64) string {
	return seconds(w) + " window"
}

// intervals are the load's sample intervals: point i ends interval i, and
// the counters' changes over it are the requests and errors it holds.
// Times are from the load's start.
type intervals struct {
	end      []float64 // seconds since the load started
	req, err []uint64  // cumulative counts at end
	t0       float64   // the load's start on the points' scale
}

func (iv intervals) seconds() float64 {
	if len(iv.end) == 0 {
		return 0
	}
	return iv.end[len(iv.end)-1]
}

// loadIntervals keeps the load's points: from the last baseline sample
// (or the first point) to the first cool-down sample, with counters that
// never go back.
func loadIntervals(pts []HealthPoint) intervals {
	start, stop := 0, len(pts)
	for i, p := range pts {
		switch p.Phase {
		case Baseline:
			start = i
		case Cooldown:
			if stop == len(pts) {
				stop = i + 1
			}
		}
	}
	var iv intervals
	if start >= stop {
		return iv
	}
	t0 := pts[start].Seconds
	iv.t0 = t0
	var req, errs uint64
	for _, p := range pts[start:stop] {
		req, errs = max(req, p.Requests), max(errs, min(p.Errors, p.Requests))
		iv.end = append(iv.end, p.Seconds-t0)
		iv.req = append(iv.req, req)
		iv.err = append(iv.err, errs)
	}
	return iv
}

// totals are the load's totals: the summary's when given, else the
// points' last counts.
func totals(iv intervals, req, errs uint64) (uint64, uint64) {
	if req > 0 || errs > 0 {
		return req, min(errs, req)
	}
	if n := len(iv.req); n > 0 {
		return iv.req[n-1], iv.err[n-1]
	}
	return 0, 0
}

// errorSpan finds when the errors began and ended.
func (h *Health) errorSpan(iv intervals) {
	first, last := -1, -1
	for i := 1; i < len(iv.end); i++ {
		if iv.err[i] > iv.err[i-1] {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		if h.Errors > 0 && len(iv.end) > 0 { // the summary saw errors the samples did not
			end := iv.seconds()
			h.LastErrorSeconds, h.ErrorsToEnd = &end, true
			zero := 0.0
			h.FirstErrorSeconds = &zero
		}
		return
	}
	s, e := iv.end[first-1], iv.end[last]
	h.FirstErrorSeconds, h.LastErrorSeconds = &s, &e
	n := len(iv.req) - 1
	h.ErrorsToEnd = iv.req[last] == iv.req[n] || e >= iv.end[n]-max(1, 0.01*iv.end[n])
}

// worstWindow slides a window of t.Window seconds over the intervals:
// each window ends at a sample and starts at the latest sample at least
// t.Window before it, so a window spans at least t.Window, or one sample
// interval when samples are further apart; a load shorter than t.Window
// is one window. The worst is the highest error rate among windows of at
// least t.MinWindowRequests requests.
func worstWindow(iv intervals, t HealthThresholds) *ErrorWindow {
	var worst *ErrorWindow
	j := 0
	for i := 1; i < len(iv.end); i++ {
		for j+1 < i && iv.end[j+1] <= iv.end[i]-t.Window {
			j++
		}
		if iv.end[i]-iv.end[j] < t.Window && i < len(iv.end)-1 {
			continue // shorter than a window: only the whole of a short load is judged
		}
		req, errs := iv.req[i]-iv.req[j], iv.err[i]-iv.err[j]
		if req < t.MinWindowRequests {
			continue
		}
		rate := float64(errs) / float64(req)
		if worst == nil || rate > worst.Rate {
			worst = &ErrorWindow{StartSeconds: iv.end[j], EndSeconds: iv.end[i], Requests: req, Errors: errs, Rate: rate}
		}
	}
	return worst
}

// Trend bins: at most maxTrendBins, each of at least minBinRequests
// requests; fewer than minTrendBins and the trend is not tested.
const (
	maxTrendBins   = 30
	minTrendBins   = 8
	minBinRequests = 50
)

// errorTrend tests whether the error rate rises over the load. The load
// is cut at samples into bins of about equal request counts, so each
// bin's rate has about the same binomial spread; the rates are fitted
// against the cumulative requests with Theil–Sen, whose interval is
// widened for the residuals' lag-1 autocorrelation (failures come in
// bursts and episodes), and the p-value is the slope's distance from 0
// in that interval (slopeP, as the leak verdict does: an inflated
// Mann–Kendall S saturates on a series that climbs in every bin). A
// count series is overdispersed and a burst is an outlier; the median of
// pairwise slopes is robust to both. A
// significant test is not enough: the last third's rate must also be
// above t.RisingFloor and above the first third's, so that a constant
// rate never reads as rising. nil when there are too few bins.
func errorTrend(iv intervals, t HealthThresholds) *ErrorTrend {
	x, y, binReq, binErr := errorBins(iv)
	if len(x) < minTrendBins {
		return nil
	}
	fit := trend.TheilSen(x, y)
	vif := trend.VarianceInflation(x, trend.Lag1(trend.Residuals(x, y, fit)))
	fit = trend.TheilSenInflated(x, y, 0.95, vif)
	tr := &ErrorTrend{Bins: len(x), PerRequestSlope: fit.Slope, CI95: [2]float64{finiteOr0(fit.Lo), finiteOr0(fit.Hi)}, PValue: slopeP(fit)}
	tr.FirstThirdRate, tr.LastThirdRate = thirds(binReq, binErr)
	tr.Rising = tr.PValue < t.Alpha && tr.LastThirdRate > t.RisingFloor && tr.LastThirdRate > tr.FirstThirdRate
	return tr
}

// finiteOr0 is v, or 0 when v is NaN or infinite (JSON has no NaN).
func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// errorBins cuts the load into bins of about equal request counts at
// sample boundaries: x is each bin's middle in cumulative requests, y its
// error rate.
func errorBins(iv intervals) (x, y []float64, req, errs []uint64) {
	n := len(iv.req)
	if n < 2 {
		return nil, nil, nil, nil
	}
	total := iv.req[n-1]
	bins := min(uint64(maxTrendBins), total/minBinRequests)
	if bins < minTrendBins {
		return nil, nil, nil, nil
	}
	prev := 0
	for b := uint64(1); b <= bins; b++ {
		goal := total * b / bins
		i := prev + 1
		for i < n-1 && iv.req[i] < goal {
			i++
		}
		if i >= n {
			break
		}
		r, e := iv.req[i]-iv.req[prev], iv.err[i]-iv.err[prev]
		if r > 0 {
			x = append(x, float64(iv.req[prev])+float64(r)/2)
			y = append(y, float64(e)/float64(r))
			req, errs = append(req, r), append(errs, e)
		}
		prev = i
		if i == n-1 {
			break
		}
	}
	return x, y, req, errs
}

// thirds are the error rates of the first and the last third of the
// bins' requests.
func thirds(req, errs []uint64) (first, last float64) {
	var total uint64
	for _, r := range req {
		total += r
	}
	rate := func(from, to uint64) float64 {
		var r, e, at uint64
		for i := range req {
			mid := at + req[i]/2
			if mid >= from && mid < to {
				r, e = r+req[i], e+errs[i]
			}
			at += req[i]
		}
		if r == 0 {
			return 0
		}
		return float64(e) / float64(r)
	}
	return rate(0, total/3), rate(total-total/3, total+1)
}
