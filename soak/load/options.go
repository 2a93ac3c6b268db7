package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Defaults filled in by New.
const (
	DefaultConcurrency = 1
	DefaultInterval    = time.Second
	DefaultTimeout     = 30 * time.Second
	// MaxOpenLoopConcurrency caps the default in-flight bound of the open
	// loop (Rate × Timeout) when the caller left Concurrency at 0 (unset);
	// any other value is taken as it is, 1 included.
	MaxOpenLoopConcurrency = 256
)

// withDefaults returns a copy of o with defaults filled in. Endpoints are
// copied so that the caller's slice is never modified.
func withDefaults(o Options) Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Rate > 0 && o.Concurrency == 0 {
		o.Concurrency = openLoopConcurrency(o.Rate, o.Timeout)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	eps := make([]Endpoint, len(o.Endpoints))
	for i, ep := range o.Endpoints {
		if ep.Weight == 0 {
			ep.Weight = 1
		}
		if ep.Method == "" {
			ep.Method = "GET"
		}
		eps[i] = ep
	}
	o.Endpoints = eps
	return o
}

// openLoopConcurrency is the in-flight bound of the open loop when the user
// did not choose one: enough for every request of one timeout period to be
// outstanding, within [1, MaxOpenLoopConcurrency]. Workers (and so
// connections) are only started when the schedule needs them.
func openLoopConcurrency(rate float64, timeout time.Duration) int {
	n := math.Ceil(rate * timeout.Seconds())
	return int(math.Max(1, math.Min(n, MaxOpenLoopConcurrency)))
}

// validate checks filled-in options; errors name the option.
func validate(o Options) error {
	switch {
	case len(o.Endpoints) == 0:
		return fmt.Errorf("load: endpoints: need at least one target URL")
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return fmt.Errorf("load: rate must be > 0, got %v", o.Rate)
	case o.Duration < 0:
		return fmt.Errorf("load: duration must be >= 0, got %v", o.Duration)
	case o.Requests == 0 && o.Duration == 0:
		return fmt.Errorf("load: requests and duration are both 0: set at least one so the run stops by itself")
	}
	for i, ep := range o.Endpoints {
		if ep.Weight < 0 {
			return fmt.Errorf("load: endpoints[%d].weight must be >= 0, got %d", i, ep.Weight)
		}
		if _, err := parseTarget(ep.URL); err != nil {
			return fmt.Errorf("load: endpoints[%d].url: %w", i, err)
		}
		if strings.ContainsAny(ep.Method, " \r\n\t") {
			return fmt.Errorf("load: endpoints[%d].method %q: must be one token like GET", i, ep.Method)
		}
	}
	for i, h := range o.Headers {
		if err := checkHeader(h); err != nil {
			return fmt.Errorf("load: headers[%d]: %w", i, err)
		}
	}
	if strings.ContainsAny(o.ContentType, "\r\n") {
		return fmt.Errorf("load: content type %q: must not contain line breaks", o.ContentType)
	}
	return validateExpectStatus(o.ExpectStatus)
}

// validateExpectStatus accepts entries like "200" or "2xx".
func validateExpectStatus(list []string) error {
	for i, s := range list {
		if _, _, err := parseStatusPattern(s); err != nil {
			return fmt.Errorf("load: expect status[%d]: %w", i, err)
		}
	}
	return nil
}

// parseStatusPattern turns "200" into [200,200] and "2xx" into [200,299].
func parseStatusPattern(s string) (lo, hi int, err error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if len(s) == 3 && s[1:] == "xx" && s[0] >= '1' && s[0] <= '5' {
		c := int(s[0]-'0') * 100
		return c, c + 99, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 100 || n > 599 {
		return 0, 0, fmt.Errorf("%q is not a status code (100-599) or class like 2xx", s)
	}
	return n, n, nil
}

// statusSet answers "is this status accepted" with a 600-entry table.
type statusSet [600]bool

func newStatusSet(list []string) *statusSet {
	var s statusSet
	if len(list) == 0 {
		list = []string{"2xx", "3xx"}
	}
	for _, p := range list {
		lo, hi, _ := parseStatusPattern(p)
		for c := lo; c <= hi; c++ {
			s[c] = true
		}
	}
	return &s
}

func (s *statusSet) accepts(code int) bool {
	return code >= 0 && code < len(s) && s[code]
}
