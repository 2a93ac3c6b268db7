// Package redact hides the secrets a URL may carry (userinfo, query
// values) wherever soakd shows or logs a load URL: the API, the web
// pages, the logs and the reports. (The alert sinks' URLs go through
// alerts.RedactURL.)
package redact

import (
	"net/url"
	"strings"
)

// Mark replaces a secret.
const Mark = "REDACTED"

// URL returns raw with its userinfo and every query value replaced by
// Mark; the scheme, host, path and query keys stay, so the URL can still
// be recognised. A string that does not parse as a URL is replaced whole.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Mark
	}
	if u.User != nil {
		u.User = url.User(Mark)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{Mark}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// In replaces, in s, every occurrence of raw by URL(raw): for error
// messages that quote a URL.
func In(s, raw string) string {
	if raw == "" {
		return s
	}
	return strings.ReplaceAll(s, raw, URL(raw))
}
