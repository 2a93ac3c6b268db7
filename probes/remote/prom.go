package remote

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/field"

	"github.com/soakd/soakd/soak/urlx"
)

// prom takes the target's series from a Prometheus server: live instant
// queries for the progress, and one range query over the run at the end.
type prom struct {
	cfg      Config
	api      v1.API
	selector map[string]string
	query    string // every series the source reads, under the selector
	extras   []Extra
	log      *zap.Logger
	fam      *family
	interval time.Duration // the scrape interval seen at Open; 0 unknown

	mu      sync.Mutex // guards all below
	live    liveSamples
	absent  map[string]string
	liveN   notes // remarks from the live queries
	fetchN  notes // remarks from the range query
	fetched bool
}

var (
	_ Source  = (*prom)(nil)
	_ Fetcher = (*prom)(nil)
)

func openProm(ctx context.Context, cfg Config, log *zap.Logger) (*prom, error) {
	client, err := cfg.client("prometheus_url")
	if err != nil {
		return nil, err
	}
	c, err := api.NewClient(api.Config{Address: cfg.PrometheusURL, Client: client})
	if err != nil {
		return nil, field.Errorf(remotePath("prometheus_url"), "%w", err)
	}
	sel, _ := parseSelector(cfg.Selector) // Validate checked it
	p := &prom{cfg: cfg, api: v1.NewAPI(c), selector: sel, log: log, extras: cfg.extras()}
	p.query = p.selectorQuery(strings.Join(metricNames(p.extras), "|"))
	snap, err := p.instant(ctx, time.Now())
	if err != nil {
		return nil, field.Errorf(remotePath("prometheus_url"), "%w", err)
	}
	where := fmt.Sprintf("Prometheus at %s, under the selector %s,", urlx.Redact(cfg.PrometheusURL), cfg.Selector)
	if p.fam, err = detect(snap, where); err != nil {
		return nil, field.Errorf(remotePath("selector"), "%w", fmt.Errorf("%w; add labels to the selector so that it picks exactly one (container=, pod=, instance=, groupname=)", err))
	}
	r, amb := read(snap, p.fam, p.extras)
	if len(amb) > 0 {
		return nil, field.Errorf(remotePath("selector"), "%w", fmt.Errorf("%s %s", where, strings.Join(amb, "; ")))
	}
	for _, x := range p.extras {
		if _, ok := r[extraPrefix+x.Name]; !ok {
			return nil, field.Errorf(remotePath("metrics"), "%s=%s: %s holds no such series", x.Name, describeSeries(series{metric: x.Metric, labels: x.Labels}), where)
		}
	}
	p.live = liveSamples{b: newBuilder(p.fam, &p.liveN), extras: p.extras, log: p.log, what: "live query"}
	p.absent = absent(p.fam, r)
	p.interval, _ = p.scrapeInterval(ctx, time.Now(), 5*time.Minute)
	return p, nil
}

// selectorQuery is the instant vector selector of the metrics names (a
// regexp alternation) under the source's selector.
func (p *prom) selectorQuery(names string) string {
	parts := []string{fmt.Sprintf("__name__=~%q", names)}
	keys := make([]string, 0, len(p.selector))
	for k := range p.selector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, p.selector[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (p *prom) instant(ctx context.Context, t time.Time) (snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout())
	defer cancel()
	v, _, _, err := p.api.Query(ctx, p.query, t)
	if err != nil {
		return nil, p.queryErr(err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("Prometheus answered %s, not a vector", resultType(v))
	}
	snap := snapshot{}
	for _, s := range vec {
		name, ls := splitMetric(s.Metric)
		snap[name] = append(snap[name], point{labels: ls, value: float64(s.Value)})
	}
	return snap, nil
}

// resultType names what a query answered: "a scalar", …, or "no result"
// when the answer had none (a nil value: calling its Type would panic).
func resultType(v model.Value) string {
	if v == nil {
		return "no result"
	}
	return "a " + v.Type().String()
}

func (p *prom) queryErr(err error) error {
	return fmt.Errorf("querying Prometheus at %s: %w", urlx.Redact(p.cfg.PrometheusURL), unwrapURLError(err))
}

func splitMetric(m model.Metric) (string, map[string]string) {
	ls := make(map[string]string, len(m))
	for k, v := range m {
		if k != model.MetricNameLabel {
			ls[string(k)] = string(v)
		}
	}
	return string(m[model.MetricNameLabel]), ls
}

// scrapeInterval measures how often Prometheus holds a sample of the
// target: the median gap between the anchor series' raw samples over the
// window before t. It returns the number of samples seen too.
func (p *prom) scrapeInterval(ctx context.Context, t time.Time, window time.Duration) (time.Duration, int) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout())
	defer cancel()
	q := p.anchorQuery() + fmt.Sprintf("[%dms]", max(window.Milliseconds(), 1000))
	v, _, _, err := p.api.Query(ctx, q, t)
	if err != nil {
		return 0, 0
	}
	m, ok := v.(model.Matrix)
	if !ok || len(m) != 1 {
		return 0, 0
	}
	vals := m[0].Values
	if len(vals) < 2 {
		return 0, len(vals)
	}
	gaps := make([]int64, len(vals)-1)
	for i := 1; i < len(vals); i++ {
		gaps[i-1] = int64(vals[i].Timestamp - vals[i-1].Timestamp)
	}
	slices.Sort(gaps)
	return time.Duration(gaps[len(gaps)/2]) * time.Millisecond, len(vals)
}

func (p *prom) anchorQuery() string {
	a := p.fam.anchor
	q := p.selectorQuery(a.metric)
	for k, v := range a.labels {
		q = strings.TrimSuffix(q, "}") + fmt.Sprintf(",%s=%q}", k, v)
	}
	return q
}

// ScrapeInterval is the target's scrape interval as seen when the source
// opened; 0 when Prometheus held too few samples to tell.
func (p *prom) ScrapeInterval() time.Duration { return p.interval }

// Sample queries Prometheus for the target's latest values, for the
// progress line and the live analysis; Fetch replaces them at the end.
func (p *prom) Sample() probes.Sample {
	t := time.Now()
	snap, err := p.instant(context.Background(), t)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && len(snap) == 0 {
		err = fmt.Errorf("the selector %s matches no series now (the target is gone or no longer scraped)", p.cfg.Selector)
	}
	out := p.live.sample(t, snap, err, p.Describe())
	probes.ReadSelf(&out)
	return out
}

// Fetch takes the target's samples from start to end with one range
// query, at the scrape interval (Prometheus holds nothing finer). The
// samples carry no soakd-own figures: the caller joins them with its own.
func (p *prom) Fetch(ctx context.Context, start, end time.Time) ([]probes.Sample, error) {
	step, n := p.scrapeInterval(ctx, end, end.Sub(start)+time.Second)
	if step <= 0 {
		if p.interval <= 0 {
			return nil, fmt.Errorf("Prometheus holds %d samples of the target over the run (%s): too few to tell its scrape interval; run longer than a few scrape intervals", n, end.Sub(start).Round(time.Second))
		}
		step = p.interval
	}
	ctx, cancel := context.WithTimeout(ctx, 2*p.cfg.timeout())
	defer cancel()
	v, _, _, err := p.api.QueryRange(ctx, p.query, v1.Range{Start: start, End: end, Step: step})
	if err != nil {
		return nil, p.queryErr(err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("Prometheus answered %s to the range query, not a matrix", resultType(v))
	}
	byTime := map[model.Time]snapshot{}
	for _, ss := range m {
		name, ls := splitMetric(ss.Metric)
		for _, sp := range ss.Values {
			snap := byTime[sp.Timestamp]
			if snap == nil {
				snap = snapshot{}
				byTime[sp.Timestamp] = snap
			}
			snap[name] = append(snap[name], point{labels: ls, value: float64(sp.Value)})
		}
	}
	times := make([]model.Time, 0, len(byTime))
	for t := range byTime {
		times = append(times, t)
	}
	slices.Sort(times)
	p.mu.Lock()
	defer p.mu.Unlock()
	b := newBuilder(p.fam, &p.fetchN)
	out := make([]probes.Sample, 0, len(times))
	for _, t := range times {
		r, amb := read(byTime[t], p.fam, p.extras)
		for _, a := range amb {
			p.fetchN.add(a)
		}
		out = append(out, b.sample(t.Time(), r))
	}
	p.fetched = true
	p.fetchN.add(fmt.Sprintf("samples from a range query over the run at Prometheus's scrape interval, %s (%d samples)", step, len(out)))
	if need := MinRun(step); end.Sub(start) < need {
		p.fetchN.add(fmt.Sprintf("the run lasted %s and Prometheus scrapes the target every %s: a slope needs at least %s (%d scrapes in the soak)", end.Sub(start).Round(time.Second), step, need, MinScrapes))
	}
	return out, nil
}

// MinScrapes is the fewest soak samples a fit takes (the verdict's floor),
// and MinRun the run length that gives them at a scrape interval, with
// the default 10 % warm-up and a margin of one scrape.
const MinScrapes = 6

// MinRun is the shortest run that holds MinScrapes soak samples at this
// scrape interval.
func MinRun(interval time.Duration) time.Duration {
	return time.Duration(float64((MinScrapes+1)*interval) / 0.9).Round(time.Second)
}

// Describe names the Prometheus server and the selector.
func (p *prom) Describe() string {
	every := "scrape interval unknown yet"
	if p.interval > 0 {
		every = "scraped every " + p.interval.String()
	}
	return fmt.Sprintf("%s %s in Prometheus at %s (%s, %s)", p.fam.name, p.cfg.Selector, urlx.Redact(p.cfg.PrometheusURL), every, "range query at the end")
}

// Absent says why each resource the series cannot give is absent.
func (p *prom) Absent() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.absent)
}

// Notes returns the range query's remarks once it ran, else the live
// queries'.
func (p *prom) Notes() []string {
	p.mu.Lock()
	fetched := p.fetched
	p.mu.Unlock()
	if fetched {
		return p.fetchN.all()
	}
	return p.liveN.all()
}
