package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// Alertmanager posts alerts to Alertmanager's API v2 (POST /api/v2/alerts)
// on every configured URL (an HA pair gets each alert on both peers, which
// deduplicate). A Send succeeds when any URL accepted it.
type Alertmanager struct {
	name    string
	urls    []string
	bases   []*url.URL // for the readiness probe
	client  *http.Client
	headers http.Header
	logger  *zap.Logger
}

var _ Sink = (*Alertmanager)(nil)

// HTTPOptions configure an HTTP sink.
type HTTPOptions struct {
	// Client is the HTTP client; nil means one with Timeout.
	Client *http.Client
	// Timeout bounds one request when Client is nil; zero means 10s.
	Timeout time.Duration
	// Headers are added to every request.
	Headers urlx.Headers
	// Logger logs partial failures (one Alertmanager of a pair down); nil
	// means none.
	Logger *zap.Logger
}

func (o HTTPOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	t := o.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return &http.Client{Timeout: t}
}

func (o HTTPOptions) header() http.Header {
	h := http.Header{}
	for k, v := range o.Headers {
		h.Set(k, v.Reveal())
	}
	return h
}

// NewAlertmanager returns a sink posting to the Alertmanagers at baseURLs
// (e.g. "http://127.0.0.1:9093"; a path prefix is kept, as for
// --web.route-prefix).
func NewAlertmanager(name string, baseURLs []string, opts HTTPOptions) (*Alertmanager, error) {
	am := &Alertmanager{name: name, client: opts.client(), headers: opts.header(), logger: opts.Logger}
	if am.logger == nil {
		am.logger = zap.NewNop()
	}
	am.headers.Set("Content-Type", "application/json")
	for i, b := range baseURLs {
		pu, err := urlx.Parse(b, urlx.HTTP)
		if err != nil {
			return nil, fmt.Errorf("alertmanager %s: urls[%d] %s: invalid URL", name, i, urlx.Redact(b))
		}
		am.urls = append(am.urls, pu.JoinPath("api", "v2", "alerts").String())
		am.bases = append(am.bases, pu.URL)
	}
	if len(am.urls) == 0 {
		return nil, fmt.Errorf("alertmanager %s: no URL", name)
	}
	return am, nil
}

// Name returns the sink's configured name.
func (am *Alertmanager) Name() string { return am.name }

// amAlert is the postableAlert of Alertmanager's API v2.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt,omitzero"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// Send posts alerts to every URL at once.
func (am *Alertmanager) Send(ctx context.Context, alerts ...Alert) (bool, error) {
	body, err := json.Marshal(toAMAlerts(alerts))
	if err != nil {
		return false, fmt.Errorf("alertmanager %s: encode: %w", am.name, err)
	}
	errs := make([]error, len(am.urls))
	retry := make([]bool, len(am.urls))
	var wg sync.WaitGroup
	for i, u := range am.urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			retry[i], errs[i] = post(ctx, am.client, u, body, am.headers)
		}()
	}
	wg.Wait()
	return am.outcome(retry, errs)
}

func (am *Alertmanager) outcome(retry []bool, errs []error) (bool, error) {
	anyRetry, failed := false, 0
	for i, err := range errs {
		if err != nil {
			failed++
			anyRetry = anyRetry || retry[i]
		}
	}
	if failed < len(errs) {
		if failed > 0 {
			am.logger.Warn("alertmanager peer failed", zap.String("sink", am.name), zap.Error(errors.Join(errs...)))
		}
		return false, nil
	}
	return anyRetry, fmt.Errorf("alertmanager %s: all %d URLs failed: %w", am.name, len(errs), errors.Join(errs...))
}

func toAMAlerts(alerts []Alert) []amAlert {
	out := make([]amAlert, 0, len(alerts))
	for _, a := range alerts {
		out = append(out, amAlert{
			Labels:       a.Labels,
			Annotations:  a.Annotations,
			StartsAt:     a.StartsAt,
			EndsAt:       a.EndsAt,
			GeneratorURL: a.GeneratorURL,
		})
	}
	return out
}

// refreshes tells the Manager to keep the endsAt of firing alerts fresh:
// Alertmanager expires an alert at its endsAt.
func (am *Alertmanager) refreshes() bool { return true }

// AlertmanagerConfig are the settings of a sink of type alertmanager.
type AlertmanagerConfig struct {
	// URLs are the Alertmanagers' base URLs; several make an HA pair.
	URLs []string `yaml:"urls"`
	// Headers are added to each request.
	Headers urlx.Headers `yaml:"headers"`
}

// Validate checks the URLs.
func (c *AlertmanagerConfig) Validate(p string, es *field.Errors) {
	if len(c.URLs) == 0 {
		es.Add(p+".urls", "required for type %s", TypeAlertmanager)
	}
	for i, u := range c.URLs {
		checkHTTPURL(es, fmt.Sprintf("%s.urls[%d]", p, i), u)
	}
}

// Build returns the Alertmanager sink.
func (c *AlertmanagerConfig) Build(name string, ho HTTPOptions) (Sink, error) {
	ho.Headers = c.Headers
	return NewAlertmanager(name, c.URLs, ho)
}
