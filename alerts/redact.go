package alerts

import (
	"net/url"
	"strings"
)

// redacted replaces secret parts of URLs.
const redacted = "REDACTED"

// minTokenLen is the length from which a path segment is taken for a token:
// Slack's and Discord's webhook URLs carry their secret as a path segment
// of 24 and more characters, while API paths have short segments.
const minTokenLen = 16

// RedactURL returns raw with its secrets replaced by "REDACTED": the
// userinfo, every query value, the fragment, and path segments long enough
// to be tokens. A string that does not parse as a URL is redacted whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redacted
	}
	if u.User != nil {
		u.User = url.User(redacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redacted}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment = redacted
		u.RawFragment = ""
	}
	if u.Opaque != "" {
		u.Opaque = redacted
	}
	u.Path = redactPath(u.Path)
	u.RawPath = ""
	return u.String()
}

func redactPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if len(s) >= minTokenLen {
			segs[i] = redacted
		}
	}
	return strings.Join(segs, "/")
}
