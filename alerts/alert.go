// Package alerts delivers soakd's alerts: the Alert type, one Sink per
// destination (Alertmanager, generic webhook, Slack-compatible webhook, exec),
// their configuration, and the Manager that deduplicates, repeats, resolves
// and delivers alerts with bounded queues and retries. It imports none of
// soakd's other packages.
package alerts

import (
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/soakd/soakd/soak/units"
)

// Status says whether an alert is firing or resolved.
type Status string

// Alert statuses.
const (
	StatusFiring   Status = "firing"
	StatusResolved Status = "resolved"
)

// Alert names (the alertname label) of the kinds of alerts soakd fires.
const (
	// AlertLeak fires when the live analysis first calls a resource a leak.
	AlertLeak = "SoakdLeak"
	// AlertExhaustion fires when a resource's time to exhaustion falls
	// below the configured threshold.
	AlertExhaustion = "SoakdTimeToExhaustion"
	// AlertTargetDown fires when the target died or restarted during a run.
	AlertTargetDown = "SoakdTargetDown"
	// AlertRequestsFailing fires when a run's requests fail: too many of
	// them, a window with too many, or a rising error rate (the verdict
	// "failing").
	AlertRequestsFailing = "SoakdRequestsFailing"
	// AlertRunFailed fires when a scheduled run failed to start.
	AlertRunFailed = "SoakdRunFailed"
	// AlertRegression fires when a run is worse than its job's baseline
	// run (soakd compare's verdict "regressed").
	AlertRegression = "SoakdRegression"
	// AlertTest is the alertname of TestAlert.
	AlertTest = "SoakdTest"
)

// Label keys every alert carries.
const (
	LabelAlertname = "alertname"
	LabelJob       = "job"
	LabelResource  = "resource"
	LabelSeverity  = "severity"
)

// Severities.
const (
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
	SeverityInfo     = "info"
)

// Resource label values of alerts that are not about one resource.
const (
	ResourceTarget = "target"
	ResourceRun    = "run"
	// ResourceRequests labels an alert about the load's requests.
	ResourceRequests = "requests"
	// ResourceBaseline labels an alert about a run against its job's
	// baseline.
	ResourceBaseline = "baseline"
)

// Annotation keys.
const (
	AnnotationSummary          = "summary"
	AnnotationPerRequest       = "per_request"
	AnnotationPerHour          = "per_hour"
	AnnotationCI95             = "ci95"
	AnnotationTimeToExhaustion = "time_to_exhaustion"
	AnnotationRunID            = "run_id"
	AnnotationReason           = "reason"
	// AnnotationTarget names the target process ("pid 123 (python3
	// app.py)"), AnnotationURL the load's URL, secrets redacted.
	AnnotationTarget = "target"
	AnnotationURL    = "url"
	// AnnotationAlso lists the other resources of one finding (pss and
	// uss of an rss leak), AnnotationEvidence why a firing alert stays.
	AnnotationAlso     = "also"
	AnnotationEvidence = "evidence"
	// AnnotationDescription says where a memory leak lives: its top line
	// is the top allocation site or the growing mappings, the summary
	// follows.
	AnnotationDescription = "description"
	// AnnotationLoad says the run's open loop fell short of its requested
	// rate: the finding is of a lighter load than asked for.
	AnnotationLoad = "load"
)

// Alert is one alert. Its identity is its Fingerprint.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
	Status       Status            `json:"status"`
}

// Fingerprint identifies an alert for deduplication. The brief's pair
// (job, resource) is extended with the alertname, so that a leak and a short
// time to exhaustion of the same resource are two alerts, as Alertmanager
// (which keys on all labels) also sees them.
type Fingerprint struct {
	Alertname string
	Job       string
	Resource  string
}

// String renders f as "alertname/job/resource".
func (f Fingerprint) String() string {
	return f.Alertname + "/" + f.Job + "/" + f.Resource
}

// Fingerprint returns a's identity.
func (a Alert) Fingerprint() Fingerprint {
	return Fingerprint{
		Alertname: a.Labels[LabelAlertname],
		Job:       a.Labels[LabelJob],
		Resource:  a.Labels[LabelResource],
	}
}

// clone returns a deep copy of a, so the Manager's state never aliases a
// caller's maps.
func (a Alert) clone() Alert {
	b := a
	b.Labels = cloneMap(a.Labels)
	b.Annotations = cloneMap(a.Annotations)
	return b
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Leak holds the figures of a leaking resource, as the live analysis
// reports them.
type Leak struct {
	Job        string
	Resource   string // e.g. "rss", "pss", "fds"
	Unit       string // "bytes", "fds", "threads", "sockets"
	RunID      string
	Summary    string     // the analysis' reason sentence
	PerRequest float64    // units per request
	PerHour    float64    // units per hour
	CI95       [2]float64 // per request
	// TimeToExhaustion is how long until the limit at the current slope;
	// zero or negative means never (or no limit known).
	TimeToExhaustion time.Duration
	// NoLimit, when set, replaces "never" in the time to exhaustion of a
	// leak that has no limit, e.g. "no memory limit; at this rate it
	// fills the host's RAM (15.6 GiB) in about 5.2 h".
	NoLimit string
}

// LeakAlert returns a warning alert for a resource the live analysis calls a
// leak.
func LeakAlert(l Leak) Alert {
	return leakAlert(AlertLeak, SeverityWarning, l)
}

// ExhaustionAlert returns a critical alert for a resource whose time to
// exhaustion is below the threshold.
func ExhaustionAlert(l Leak) Alert {
	return leakAlert(AlertExhaustion, SeverityCritical, l)
}

func leakAlert(name, severity string, l Leak) Alert {
	ann := map[string]string{
		AnnotationSummary:          l.Summary,
		AnnotationPerRequest:       formatAmount(l.PerRequest, l.Unit) + "/request",
		AnnotationPerHour:          formatAmount(l.PerHour, l.Unit) + "/h",
		AnnotationCI95:             "[" + formatAmount(l.CI95[0], l.Unit) + ", " + formatAmount(l.CI95[1], l.Unit) + "]/request",
		AnnotationTimeToExhaustion: formatTTE(l.TimeToExhaustion),
	}
	if l.TimeToExhaustion <= 0 && l.NoLimit != "" {
		ann[AnnotationTimeToExhaustion] = l.NoLimit
	}
	if l.RunID != "" {
		ann[AnnotationRunID] = l.RunID
	}
	return Alert{
		Labels:      labels(name, l.Job, l.Resource, severity),
		Annotations: ann,
		Status:      StatusFiring,
	}
}

// TargetDownAlert returns a critical alert: the target died or restarted
// during run runID; reason says which, in a sentence.
func TargetDownAlert(job, runID, reason string) Alert {
	return simpleAlert(AlertTargetDown, job, ResourceTarget, SeverityCritical, runID, reason)
}

// RequestsFailingAlert returns a warning alert: the requests of run
// runID are failing; reason says how many failed, why and when.
func RequestsFailingAlert(job, runID, reason string) Alert {
	return simpleAlert(AlertRequestsFailing, job, ResourceRequests, SeverityWarning, runID, reason)
}

// RegressionAlert returns a warning alert: a run is worse than its job's
// baseline; reason says in which metrics.
func RegressionAlert(job, runID, reason string) Alert {
	return simpleAlert(AlertRegression, job, ResourceBaseline, SeverityWarning, runID, reason)
}

// RunFailedAlert returns a warning alert: a scheduled run failed to start;
// reason says why.
func RunFailedAlert(job, runID, reason string) Alert {
	return simpleAlert(AlertRunFailed, job, ResourceRun, SeverityWarning, runID, reason)
}

func simpleAlert(name, job, resource, severity, runID, reason string) Alert {
	ann := map[string]string{AnnotationSummary: reason}
	if runID != "" {
		ann[AnnotationRunID] = runID
	}
	return Alert{
		Labels:      labels(name, job, resource, severity),
		Annotations: ann,
		Status:      StatusFiring,
	}
}

func labels(name, job, resource, severity string) map[string]string {
	return map[string]string{
		LabelAlertname: name,
		LabelJob:       job,
		LabelResource:  resource,
		LabelSeverity:  severity,
	}
}

// RunURL returns the link to a run's page:
// "<externalURL>/runs/<runID>" (the run's web page), or "" when either is empty.
func RunURL(externalURL, runID string) string {
	if externalURL == "" || runID == "" {
		return ""
	}
	return strings.TrimRight(externalURL, "/") + "/runs/" + url.PathEscape(runID)
}

// formatAmount renders v in unit with three significant digits, never in
// scientific notation (units.Amount): bytes in KiB, MiB, GiB or TiB,
// counts plainly ("650346 fds", "0.00501 fds"), CPU seconds as time.
// FormatAmount formats v of unit as the alerts' annotations do, e.g.
// "2.9 KiB" for 2970 bytes.
func FormatAmount(v float64, unit string) string { return formatAmount(v, unit) }

func formatAmount(v float64, unit string) string {
	if unit == "CPU seconds" {
		return cpuTime(v)
	}
	return units.Amount(v, unit)
}

// cpuTime renders CPU seconds in s, ms, µs or ns: "1 ns CPU", "360 µs CPU".
func cpuTime(v float64) string {
	a := math.Abs(v)
	for _, u := range []struct {
		name string
		size float64
	}{{"s", 1}, {"ms", 1e-3}, {"µs", 1e-6}} {
		if a >= u.size {
			return units.Sig3(v/u.size) + " " + u.name + " CPU"
		}
	}
	return units.Sig3(v/1e-9) + " ns CPU"
}

func formatTTE(d time.Duration) string {
	if d <= 0 {
		return "never"
	}
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
