package urlx

// Secret is a value that must never be shown: a bearer token, a header
// that carries one (Authorization), a password. It reads from YAML and
// JSON as a plain string, and prints as Mark however it is printed: fmt's
// verbs (%v, %s, %q, %+v and %#v, inside a struct too), JSON, YAML and
// text marshalling, and zap's Stringer and reflection fields. Reveal is
// the one way to read it, at the place that sends it.
type Secret string

// Reveal is the secret's value, to send it.
func (s Secret) Reveal() string { return string(s) }

// Set tells whether a secret is given.
func (s Secret) Set() bool { return s != "" }

// String is Mark, or "" when no secret is set (so that "none" shows).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Mark
}

// GoString is what %#v prints.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalText is what JSON, YAML and zap's reflection print.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the value as it is written: marshalling hides it,
// reading does not.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}

// Headers are HTTP headers whose values may be secrets (Authorization):
// all are kept as Secrets, and shown redacted.
type Headers map[string]Secret
