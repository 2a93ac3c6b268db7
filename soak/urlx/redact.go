package urlx

import (
	"net/url"
	"strings"
)

// Mark replaces a secret.
const Mark = "REDACTED"

// minTokenLen is the length from which a path segment without a dot is
// taken for a token: Slack's and Discord's webhook URLs carry their secret
// as a path segment of 24 and more characters, while API paths have short
// segments. A dot marks a file or host name ("soakd.example.com" written
// without its scheme), which stays.
const minTokenLen = 16

// Redact returns raw with its secrets replaced by Mark: the userinfo,
// every query value, the fragment, what comes before an @ in an opaque
// URL (mailto:, or user:pw@host written without a scheme), and path
// segments long enough to be tokens. The scheme, host, short path
// segments and query keys stay, so the URL can still be recognised.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactUnparsed(raw)
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
	if u.Fragment != "" {
		u.Fragment = Mark
		u.RawFragment = ""
	}
	if i := strings.LastIndex(u.Opaque, "@"); i >= 0 { // "user:pw@host" read as scheme "user"
		u.Opaque = Mark + u.Opaque[i:]
	}
	u.Opaque = redactPath(u.Opaque)
	u.Path = redactPath(u.Path)
	u.RawPath = ""
	return u.String()
}

// redactUnparsed hides a string that is not a URL: whole when it has an
// @, ? or # (a secret may ride there), else its long tokens only, so that
// "127.0.0.1:8080" can be quoted in the error that says it lacks a scheme.
func redactUnparsed(raw string) string {
	if strings.ContainsAny(raw, "@?#") {
		return Mark
	}
	return redactPath(raw)
}

func redactPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if len(s) >= minTokenLen && !strings.Contains(s, ".") {
			segs[i] = Mark
		}
	}
	return strings.Join(segs, "/")
}

// Scrub replaces, in text, every occurrence of each of urls by its
// Redact form: for error messages and log lines that quote a URL (as
// net/http's errors do, userinfo and query included).
func Scrub(text string, urls ...string) string {
	for _, raw := range urls {
		if raw == "" {
			continue
		}
		text = strings.ReplaceAll(text, raw, Redact(raw))
		if u, err := url.Parse(raw); err == nil && u.String() != raw {
			text = strings.ReplaceAll(text, u.String(), Redact(raw)) // as net/http quotes it
		}
	}
	return text
}
