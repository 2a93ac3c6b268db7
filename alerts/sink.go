package alerts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/soakd/soakd/soak/urlx"
)

// Sink delivers alerts to one destination. Send returns retryable = true
// when trying again later may succeed (network error, 5xx, timeout).
// Errors never contain secrets.
type Sink interface {
	Name() string
	Send(ctx context.Context, alerts ...Alert) (retryable bool, err error)
}

// maxErrorBody bounds how much of a response body goes into an error.
const maxErrorBody = 256

// post sends body to rawURL and classifies the outcome. Errors carry the
// redacted URL only.
func post(ctx context.Context, c *http.Client, rawURL string, body []byte, headers http.Header) (bool, error) {
	safe := urlx.Redact(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("post %s: %w", safe, redactErr(err, rawURL))
	}
	for k, vs := range headers {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return true, fmt.Errorf("post %s: %w", safe, redactErr(err, rawURL))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests ||
		resp.StatusCode == http.StatusRequestTimeout
	msg := strings.Join(strings.Fields(string(snippet)), " ")
	return retry, fmt.Errorf("post %s: status %d: %q", safe, resp.StatusCode, msg)
}

// redactErr strips rawURL from err: net/http's *url.Error carries the full
// URL, userinfo and query included.
func redactErr(err error, rawURL string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &redactedError{msg: ue.Op + ": " + urlx.Scrub(ue.Err.Error(), rawURL), err: ue.Err}
	}
	return &redactedError{msg: urlx.Scrub(err.Error(), rawURL), err: err}
}

// redactedError is an error whose message has been scrubbed of secrets; it
// still unwraps to the cause (context.DeadlineExceeded and the like).
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
