package load

import (
	"regexp"
	"time"
)

// Endpoint is one request shape. With several endpoints, each request picks
// one at random in proportion to Weight, or the favoured one FavourShare
// of the time while Engine.Favour names one.
type Endpoint struct {
	Weight int
	Method string
	URL    string
	Body   []byte
}

// Header is one request header line.
type Header struct {
	Name, Value string
}

// Options configures a load run. The zero value is not valid: New fills
// defaults and validates.
type Options struct {
	Endpoints   []Endpoint
	Headers     []Header
	ContentType string // sent as Content-Type when non-empty

	// Concurrency is the number of closed-loop workers, each with its own
	// connection. In open loop (Rate > 0) it bounds the requests in flight.
	Concurrency int
	// Rate, when > 0, selects the open loop: requests are scheduled at a
	// constant rate and latency is measured from each intended send time.
	Rate float64

	Requests uint64        // stop after this many completed requests (successes and errors); 0 = no limit
	Duration time.Duration // stop after this long; 0 = no limit

	KeepAlive bool
	Timeout   time.Duration // per request

	// ExpectStatus lists accepted status codes or classes, e.g. "200",
	// "2xx". Empty means any 2xx or 3xx.
	ExpectStatus []string
	// ExpectBody, when set, must match each response body; only the first
	// 64 KiB of a body are kept to match against.
	ExpectBody  *regexp.Regexp
	CheckLength bool // fail a response whose body length differs from the first one's

	// Interval is the period of OnInterval calls (default 1s).
	Interval   time.Duration
	OnInterval func(Interval)

	// OnResult, when non-nil, is called once per completed request from the
	// worker that made it (so from many goroutines at once). It must be
	// cheap and safe for concurrent use. Abandoned requests are not reported.
	OnResult func(Result)

	// InsecureTLS skips certificate verification for https:// targets.
	InsecureTLS bool
}

// Result is the outcome of one completed request, passed to OnResult.
type Result struct {
	Latency  time.Duration
	Status   int    // 0 when no response was received
	Cause    string // one of the Cause* constants; "" on success
	BytesIn  int    // response bytes read, headers included
	BytesOut int    // request bytes written, headers included
}

// Percentile is one row of the latency percentile table.
type Percentile struct {
	Percent float64 `json:"percent"` // 0..100
	Seconds float64 `json:"seconds"`
}

// Interval is the accounting of one progress interval.
type Interval struct {
	Start, End time.Time
	Requests   uint64  // cumulative completed requests at End
	Errors     uint64  // cumulative errors at End
	Count      uint64  // requests completed within the interval
	Rate       float64 // Count / interval length, req/s
	MovingRate float64 // moving average of Rate, req/s
	P50, P99   float64 // latency of this interval's requests, seconds
	P999       float64 // and its 99.9th percentile
	Mean       float64 // mean latency of this interval's requests, seconds

	// InFlight is the number of requests in flight at End, and Waiting
	// how long the oldest of them had been waiting then: what a run shows
	// while no request completes.
	InFlight int
	Waiting  time.Duration
	BytesIn  uint64 // cumulative response bytes of completed requests at End
}

// Error causes, the keys of Summary.ErrorsByCause.
const (
	CauseConnRefused = "connect_refused"
	CauseReset       = "reset"
	CauseTimeout     = "timeout"
	CauseAddress     = "address"
	CauseStatus      = "status_mismatch"
	CauseBody        = "body_mismatch"
	CauseLength      = "length_mismatch"
	CauseFDUnavail   = "fd_unavailable" // client out of file descriptors (EMFILE/ENFILE)
	CauseTLS         = "tls"            // TLS handshake failed: not TLS, bad certificate, alert
	CauseOther       = "other"
)

// LatencySummary is the latency distribution in seconds.
type LatencySummary struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// MaxErrorTexts is the number of distinct error texts kept per cause.
const MaxErrorTexts = 5

// ErrorText is one distinct error text of a cause and how many requests
// failed with it.
type ErrorText struct {
	Text  string `json:"text"`
	Count uint64 `json:"count"`
}

// EndpointCount is the accounting of one endpoint (URL redacted).
type EndpointCount struct {
	Method   string `json:"method"`
	URL      string `json:"url"`
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
}

// Summary is the final accounting of a run: the report's "load" object.
type Summary struct {
	Mode        string  `json:"mode"` // "closed" or "open"
	Concurrency int     `json:"concurrency"`
	TargetRate  float64 `json:"target_rate,omitempty"`
	KeepAlive   bool    `json:"keepalive"`

	Requests      uint64            `json:"requests"`
	Successes     uint64            `json:"successes"`
	Errors        uint64            `json:"errors"`
	ErrorsByCause map[string]uint64 `json:"errors_by_cause"`
	// ErrorTexts keeps, per cause, the first MaxErrorTexts distinct error
	// texts (redacted, without the addresses and ports that vary per
	// connection), first seen first, with their counts. For
	// status_mismatch the text is the status line.
	ErrorTexts    map[string][]ErrorText `json:"error_texts,omitempty"`
	StatusClasses map[string]uint64      `json:"status_classes"`
	BytesIn       uint64                 `json:"bytes_in"`
	BytesOut      uint64                 `json:"bytes_out"`
	Connections   uint64                 `json:"connections"`

	// Open loop only: sends that left after their intended time, and sends
	// that never left because the run ended or the backlog was full.
	LateSends   uint64 `json:"late_sends"`
	MissedSends uint64 `json:"missed_sends"`

	DurationSeconds float64 `json:"duration_seconds"`
	RPS             float64 `json:"rps"`
	// Latency covers every request that got a status line and every one
	// that timed out, counted at its measured time (at least the timeout,
	// from the intended send time in open loop): a timeout is a latency
	// censored at the timeout, never dropped. A request that failed for
	// another reason without an answer (refused, reset, TLS) is no
	// latency and is left out.
	Latency LatencySummary `json:"latency_seconds"`
	// Censored counts the latencies censored by the timeout
	// (TimeoutSeconds): the requests that timed out.
	Censored       uint64  `json:"censored"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// Unanswered counts the requests left out of Latency: failed before
	// the timeout without a status line (refused, reset, TLS, malformed).
	Unanswered uint64 `json:"unanswered"`
	// Percentiles is the table 50 66 75 80 90 95 98 99 99.9 100, like ab's.
	Percentiles []Percentile `json:"percentiles"`
	// Abandoned counts requests in flight when a duration or interrupt stop
	// came; they are cut short and not counted in Requests.
	Abandoned uint64 `json:"abandoned"`
	StoppedBy string `json:"stopped_by"` // "requests", "duration", "interrupt", or StopTargetDied or StopDecided (set by the runner)
	// StopDetail says more of why the load stopped, for the text: how the
	// target died, with StopTargetDied, or after how long, with
	// StopDecided (set by the runner).
	StopDetail string `json:"stop_detail,omitempty"`
	// AttemptsWhileGone counts the requests completed while the target
	// was gone (set by the runner). They are not in Requests, Successes,
	// Errors, ErrorsByCause or StatusClasses: they are not the soak's.
	AttemptsWhileGone uint64 `json:"attempts_while_target_gone,omitempty"`
	// Endpoints are the per-endpoint counts, in the order of the options.
	Endpoints []EndpointCount `json:"endpoints,omitempty"`
}
