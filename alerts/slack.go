package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// Slack posts {"text": "..."} to a Slack-compatible incoming webhook
// (Slack, Mattermost, Rocket.Chat): one line per alert with its figures.
type Slack struct {
	name    string
	url     string
	client  *http.Client
	headers http.Header
}

var _ Sink = (*Slack)(nil)

// NewSlack returns a Slack sink posting to the incoming-webhook URL rawURL
// (itself a secret: it is redacted in errors).
func NewSlack(name, rawURL string, opts HTTPOptions) *Slack {
	s := &Slack{name: name, url: rawURL, client: opts.client(), headers: opts.header()}
	s.headers.Set("Content-Type", "application/json")
	return s
}

// Name returns the sink's configured name.
func (s *Slack) Name() string { return s.name }

// Send posts one message holding every alert.
func (s *Slack) Send(ctx context.Context, alerts ...Alert) (bool, error) {
	body, err := json.Marshal(struct {
		Text string `json:"text"`
	}{SlackText(alerts)})
	if err != nil {
		return false, fmt.Errorf("slack %s: encode: %w", s.name, err)
	}
	retry, err := post(ctx, s.client, s.url, body, s.headers)
	if err != nil {
		return retry, fmt.Errorf("slack %s: %w", s.name, err)
	}
	return false, nil
}

// SlackText renders alerts as short lines, e.g.
//
//	[FIRING] SoakdLeak web/rss: RSS grows 4 KiB per request. +4 KiB/request, +12 MiB/h, exhaustion in 31h0m0s <http://soakhost:7797/runs/42|run 42>
func SlackText(alerts []Alert) string {
	lines := make([]string, 0, len(alerts))
	for _, a := range alerts {
		lines = append(lines, slackLine(a))
	}
	return strings.Join(lines, "\n")
}

func slackLine(a Alert) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s %s/%s: %s", strings.ToUpper(string(a.Status)),
		a.Labels[LabelAlertname], slackEscape(a.Labels[LabelJob]), slackEscape(a.Labels[LabelResource]),
		slackEscape(a.Annotations[AnnotationSummary]))
	var figs []string
	if v := a.Annotations[AnnotationPerRequest]; v != "" {
		figs = append(figs, "+"+v)
	}
	if v := a.Annotations[AnnotationPerHour]; v != "" {
		figs = append(figs, "+"+v)
	}
	if v := a.Annotations[AnnotationTimeToExhaustion]; v != "" && v != "never" {
		figs = append(figs, "exhaustion in "+v)
	}
	if len(figs) > 0 {
		b.WriteString(" " + strings.Join(figs, ", "))
	}
	if v := a.Annotations[AnnotationLoad]; v != "" {
		b.WriteString(" (load below its rate: " + slackEscape(v) + ")")
	}
	if a.GeneratorURL != "" {
		label := "run"
		if id := a.Annotations[AnnotationRunID]; id != "" {
			label = "run " + id
		}
		fmt.Fprintf(&b, " <%s|%s>", slackEscape(a.GeneratorURL), label)
	}
	return b.String()
}

// slackEscaper escapes the three characters Slack's message text treats as
// markup: a reason's "p < 1e-9" must not open a link or a mention.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func slackEscape(s string) string { return slackEscaper.Replace(s) }

// SlackConfig are the settings of a sink of type slack.
type SlackConfig struct {
	// URL is the incoming-webhook URL (itself a secret).
	URL string `yaml:"url"`
	// Headers are added to each request.
	Headers urlx.Headers `yaml:"headers"`
}

// Validate checks the URL.
func (c *SlackConfig) Validate(p string, es *field.Errors) { checkHookURL(es, p, TypeSlack, c.URL) }

// Build returns the Slack sink.
func (c *SlackConfig) Build(name string, ho HTTPOptions) (Sink, error) {
	ho.Headers = c.Headers
	return NewSlack(name, c.URL, ho), nil
}
