package alerts

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// SignatureHeader carries the webhook body's HMAC-SHA256 signature,
// "sha256=<hex>", when the sink has a secret.
const SignatureHeader = "X-Soakd-Signature"

// PayloadVersion is the version of the webhook Payload schema.
const PayloadVersion = "1"

// Payload is the JSON body of the webhook sink and the stdin of the exec
// sink:
//
//	{
//	  "version": "1",               // schema version
//	  "receiver": "hook",           // the sink's name
//	  "status": "firing",           // "resolved" when every alert is resolved
//	  "sentAt": "2026-11-30T07:45:00Z",
//	  "alerts": [{
//	    "status": "firing",         // or "resolved"
//	    "labels": {"alertname": "SoakdLeak", "job": "web", "resource": "rss", "severity": "warning"},
//	    "annotations": {"summary": "...", "per_request": "4 KiB/request", "per_hour": "12 MiB/h",
//	                    "ci95": "[3.8 KiB, 4.2 KiB]/request", "time_to_exhaustion": "31h0m0s", "run_id": "42"},
//	    "startsAt": "2026-11-30T07:40:00Z",
//	    "endsAt": "2026-11-30T15:40:00Z", // firing: when the alert expires unless re-sent; resolved: when it ended
//	    "generatorURL": "http://soakhost:7797/runs/42",
//	    "fingerprint": "SoakdLeak/web/rss"
//	  }]
//	}
//
// With a secret, the header X-Soakd-Signature: sha256=<hex> is the
// HMAC-SHA256 of the exact body bytes under the secret.
type Payload struct {
	Version  string         `json:"version"`
	Receiver string         `json:"receiver"`
	Status   Status         `json:"status"`
	SentAt   time.Time      `json:"sentAt"`
	Alerts   []PayloadAlert `json:"alerts"`
}

// PayloadAlert is one alert of a Payload.
type PayloadAlert struct {
	Alert
	Fingerprint string `json:"fingerprint"`
}

// NewPayload builds the payload of alerts for the sink named receiver.
func NewPayload(receiver string, now time.Time, alerts []Alert) Payload {
	p := Payload{Version: PayloadVersion, Receiver: receiver, Status: StatusResolved, SentAt: now.UTC()}
	for _, a := range alerts {
		if a.Status != StatusResolved {
			p.Status = StatusFiring
		}
		p.Alerts = append(p.Alerts, PayloadAlert{Alert: a, Fingerprint: a.Fingerprint().String()})
	}
	return p
}

// Sign returns the signature header value of body under secret:
// "sha256=" + hex(HMAC-SHA256(secret, body)).
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether header is body's valid signature under secret, in
// constant time. Receivers written in Go can use it.
func Verify(secret, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(header))
}

// Webhook posts a Payload to one URL, signed when it has a secret.
type Webhook struct {
	name    string
	url     string
	secret  []byte
	client  *http.Client
	headers http.Header
	now     func() time.Time
}

var _ Sink = (*Webhook)(nil)

// NewWebhook returns a webhook sink posting to rawURL; secret may be empty
// (no signature).
func NewWebhook(name, rawURL string, secret []byte, opts HTTPOptions) *Webhook {
	w := &Webhook{name: name, url: rawURL, secret: secret, client: opts.client(), headers: opts.header(), now: time.Now}
	w.headers.Set("Content-Type", "application/json")
	w.headers.Set("User-Agent", "soakd-alerts")
	return w
}

// Name returns the sink's configured name.
func (w *Webhook) Name() string { return w.name }

// Send posts one Payload holding alerts.
func (w *Webhook) Send(ctx context.Context, alerts ...Alert) (bool, error) {
	body, err := json.Marshal(NewPayload(w.name, w.now(), alerts))
	if err != nil {
		return false, fmt.Errorf("webhook %s: encode: %w", w.name, err)
	}
	h := w.headers.Clone()
	if len(w.secret) > 0 {
		h.Set(SignatureHeader, Sign(w.secret, body))
	}
	retry, err := post(ctx, w.client, w.url, body, h)
	if err != nil {
		return retry, fmt.Errorf("webhook %s: %w", w.name, err)
	}
	return false, nil
}

// WebhookConfig are the settings of a sink of type webhook.
type WebhookConfig struct {
	// URL receives the Payload.
	URL string `yaml:"url"`
	// Secret signs the bodies; SecretFile names a file holding it
	// (trailing newline ignored). At most one of them.
	Secret     string `yaml:"secret"`
	SecretFile string `yaml:"secret_file"`
	// Headers are added to each request.
	Headers urlx.Headers `yaml:"headers"`
}

// Validate checks the URL and the secret.
func (c *WebhookConfig) Validate(p string, es *field.Errors) {
	checkHookURL(es, p, TypeWebhook, c.URL)
	if c.Secret != "" && c.SecretFile != "" {
		es.Add(p+".secret", "set secret or secret_file, not both")
	}
}

// Build reads the secret file and returns the webhook sink.
func (c *WebhookConfig) Build(name string, ho HTTPOptions) (Sink, error) {
	secret, err := c.secret()
	if err != nil {
		return nil, err
	}
	ho.Headers = c.Headers
	return NewWebhook(name, c.URL, secret, ho), nil
}

func (c *WebhookConfig) setDirectory(dir string) {
	if c.SecretFile != "" && !filepath.IsAbs(c.SecretFile) {
		c.SecretFile = filepath.Join(dir, c.SecretFile)
	}
}

func (c *WebhookConfig) secret() ([]byte, error) {
	if c.SecretFile == "" {
		return []byte(c.Secret), nil
	}
	b, err := os.ReadFile(c.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("secret_file: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return nil, fmt.Errorf("secret_file %s: empty", c.SecretFile)
	}
	return b, nil
}

// checkHookURL checks the required URL of a hook sink of type typ.
func checkHookURL(es *field.Errors, p, typ, raw string) {
	if raw == "" {
		es.Add(p+".url", "required for type %s", typ)
		return
	}
	checkHTTPURL(es, p+".url", raw)
}
