package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/zap"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/field"

	"github.com/soakd/soakd/soak/urlx"
)

// scrape reads the target's own metrics endpoint at each sample.
type scrape struct {
	cfg    Config
	url    string
	client *http.Client
	extras []Extra
	log    *zap.Logger
	notes  notes

	mu     sync.Mutex // guards all below
	live   liveSamples
	absent map[string]string
}

var _ Source = (*scrape)(nil)

// acceptHeader asks for the text format first, then OpenMetrics 1.0: both
// are what expfmt decodes.
const acceptHeader = `text/plain;version=0.0.4;q=0.9,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1`

func openScrape(ctx context.Context, cfg Config, log *zap.Logger) (*scrape, error) {
	client, err := cfg.client("metrics_url")
	if err != nil {
		return nil, err
	}
	s := &scrape{cfg: cfg, url: cfg.MetricsURL, client: client, log: log, extras: cfg.extras()}
	snap, err := s.get(ctx)
	if err != nil {
		return nil, field.Errorf(remotePath("metrics_url"), "%w", err)
	}
	where := urlx.Redact(s.url)
	fam, err := detect(snap, where)
	if err != nil {
		return nil, field.Errorf(remotePath("metrics_url"), "%w", err)
	}
	r, amb := read(snap, fam, s.extras)
	if len(amb) > 0 {
		return nil, field.Errorf(remotePath("metrics_url"), "%w", fmt.Errorf("%s: %s", where, strings.Join(amb, "; ")))
	}
	for _, x := range s.extras {
		if _, ok := r[extraPrefix+x.Name]; !ok {
			return nil, field.Errorf(remotePath("metrics"), "%s=%s: %s has no such series", x.Name, describeSeries(series{metric: x.Metric, labels: x.Labels}), where)
		}
	}
	s.live = liveSamples{b: newBuilder(fam, &s.notes), extras: s.extras, log: s.log, what: "scrape"}
	s.absent = absent(fam, r)
	return s, nil
}

// get scrapes the endpoint once and decodes it with expfmt.
func (s *scrape) get(ctx context.Context) (snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", urlx.Redact(s.url), unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (check the bearer token or basic auth file)"
		}
		return nil, fmt.Errorf("scraping %s: HTTP %s%s", urlx.Redact(s.url), resp.Status, hint)
	}
	if isOpenMetrics(resp.Header.Get("Content-Type")) {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err != nil {
			return nil, fmt.Errorf("scraping %s: %w", urlx.Redact(s.url), err)
		}
		return decode(bytes.NewReader(openMetricsAsText(body)), expfmt.NewFormat(expfmt.TypeTextPlain))
	}
	return decode(io.LimitReader(resp.Body, maxBody), expfmt.ResponseFormat(resp.Header))
}

// maxBody bounds an exposition soakd reads (cAdvisor's for a big node is
// a few MB).
const maxBody = 64 << 20

func isOpenMetrics(contentType string) bool {
	return strings.HasPrefix(strings.TrimSpace(contentType), "application/openmetrics-text")
}

// openMetricsAsText turns an OpenMetrics 1.0 exposition into the text
// format's sample lines, which expfmt parses: expfmt's own decoder takes
// OpenMetrics as text and fails on its metadata (a counter's family is
// named without _total, so client_golang's go_memstats_alloc_bytes gauge
// and counter share a HELP name). soakd needs only the sample values, so
// the comment lines (HELP, TYPE, UNIT, EOF) go, and so do each sample's
// timestamp (seconds here, milliseconds in the text format) and exemplar.
// The samples are then untyped, under their full names.
func openMetricsAsText(in []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(in) {
		line = bytes.TrimRight(line, "\n")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if i := bytes.Index(line, []byte(" # ")); i >= 0 && bytes.LastIndexByte(line[:i], '}') >= bytes.LastIndexByte(line[:i], '"') {
			line = line[:i] // an exemplar
		}
		// name{labels} value [timestamp]: keep the first two fields after
		// the labels.
		rest := line
		head := ""
		if j := bytes.LastIndexByte(line, '}'); j >= 0 {
			head, rest = string(line[:j+1]), line[j+1:]
		}
		f := strings.Fields(string(rest))
		if head == "" && len(f) >= 2 {
			head, f = f[0], f[1:]
		}
		if len(f) == 0 {
			continue
		}
		out.WriteString(head + " " + f[0] + "\n")
	}
	return out.Bytes()
}

// decode reads an exposition in format f (text, OpenMetrics 1.0 or
// delimited protobuf) into a snapshot of its gauges, counters and untyped
// values.
func decode(r io.Reader, f expfmt.Format) (snapshot, error) {
	if f.FormatType() == expfmt.TypeUnknown {
		f = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	if f.FormatType() == expfmt.TypeProtoDelim {
		body, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("reading the metrics (%s): %w", f, err)
		}
		if err := checkDelimited(body); err != nil {
			return nil, fmt.Errorf("reading the metrics (%s): %w", f, err)
		}
		r = bytes.NewReader(body)
	}
	dec := expfmt.NewDecoder(r, f)
	snap := snapshot{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return snap, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the metrics (%s): %w", f, err)
		}
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			v, ok := value(mf.GetType(), m)
			if !ok {
				continue
			}
			ls := make(map[string]string, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				ls[l.GetName()] = l.GetValue()
			}
			snap[name] = append(snap[name], point{labels: ls, value: v})
		}
	}
}

// checkDelimited checks that each length-delimited message of b fits in
// what is left of b. expfmt's decoder allocates whatever length a
// message declares, up to 2^63 bytes, before it reads a byte of it.
func checkDelimited(b []byte) error {
	for len(b) > 0 {
		size, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return fmt.Errorf("a message length: %w", protowire.ParseError(n))
		}
		if size > uint64(len(b)-n) {
			return fmt.Errorf("a message declares %d bytes, and %d are left", size, len(b)-n)
		}
		b = b[n+int(size):]
	}
	return nil
}

func value(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch t {
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), m.Gauge != nil
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), m.Counter != nil
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), m.Untyped != nil
	}
	return 0, false
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Sample scrapes the endpoint now.
func (s *scrape) Sample() probes.Sample {
	t := time.Now()
	snap, err := s.get(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.live.sample(t, snap, err, s.Describe())
	probes.ReadSelf(&out)
	return out
}

// Describe names the endpoint, without credentials.
func (s *scrape) Describe() string {
	return fmt.Sprintf("%s, scraped at each sample (%s)", urlx.Redact(s.url), s.live.b.fam.name)
}

// Absent says why each resource the endpoint cannot give is absent.
func (s *scrape) Absent() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.absent)
}

// Notes returns the run's remarks.
func (s *scrape) Notes() []string { return s.notes.all() }
