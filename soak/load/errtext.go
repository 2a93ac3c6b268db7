package load

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/soakd/soakd/soak/urlx"
)

// maxTextLen bounds one error text, status lines included.
const maxTextLen = 200

// handshakeError is a failed TLS handshake, so that classify can tell it
// from a failure of the request that follows.
type handshakeError struct{ err error }

func (h *handshakeError) Error() string { return "tls handshake: " + errText(h.err) }
func (h *handshakeError) Unwrap() error { return h.err }

// isTLS tells whether err is a TLS failure: a handshake that failed for
// another reason than a timeout or a reset, or a TLS or certificate error.
func isTLS(err error) bool {
	var hs *handshakeError
	var rh tls.RecordHeaderError
	var al tls.AlertError
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &rh), errors.As(err, &al), errors.As(err, &cv),
		errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return true
	case errors.As(err, &hs):
		c := classifyTransport(hs.err)
		return c != CauseTimeout && c != CauseReset
	}
	return false
}

// errText is err's text without what varies from one connection to the
// next (local and remote addresses and ports), so that texts group: "read
// tcp 127.0.0.1:41234->127.0.0.1:8080: read: connection reset by peer"
// becomes "read: connection reset by peer".
func errText(err error) string {
	var hs *handshakeError
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &hs):
		return hs.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection in the middle of the response"
	case errors.Is(err, io.EOF):
		return "the server closed the connection before answering"
	case errors.As(err, &dns):
		return "lookup " + dns.Name + ": " + dns.Err
	case errors.As(err, &op) && op.Err != nil:
		inner := errText(op.Err)
		if strings.HasPrefix(inner, op.Op+":") {
			return inner
		}
		return op.Op + ": " + inner
	}
	return stripAddrs(err.Error())
}

// addrRE matches an IPv4 or bracketed IPv6 address with a port, and the
// "->" or space around it.
var addrRE = regexp.MustCompile(`\s*(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.%\w]+\]):\d+(?:->)?`)

func stripAddrs(s string) string {
	if !strings.ContainsRune(s, ':') {
		return s
	}
	return addrRE.ReplaceAllString(s, "")
}

// textEntry is one distinct error text of a worker, before redaction.
type textEntry struct {
	cause int
	text  string
	n     uint64
	first time.Duration // Engine.mono when first seen
}

// addText counts text (or, when text is "", the bytes b) under cause;
// a text past the first MaxErrorTexts of its cause is not kept. The
// caller holds st.mu.
func (st *stats) addText(cause int, text string, b []byte, at time.Duration) {
	kept := 0
	for i := range st.texts {
		e := &st.texts[i]
		if e.cause != cause {
			continue
		}
		if (text != "" && e.text == text) || (text == "" && e.text == string(b)) {
			e.n++
			return
		}
		kept++
	}
	if kept >= MaxErrorTexts {
		return
	}
	if text == "" {
		text = string(b)
	}
	st.texts = append(st.texts, textEntry{cause: cause, text: text, n: 1, first: at})
}

// mergeTexts turns the workers' texts into Summary.ErrorTexts: redacted
// and cleaned, equal texts merged, first seen first, MaxErrorTexts a
// cause.
func mergeTexts(all []textEntry, urls []string) map[string][]ErrorText {
	if len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(all, func(a, b textEntry) int { return cmp.Compare(a.first, b.first) })
	out := map[string][]ErrorText{}
	for _, e := range all {
		c, t := causes[e.cause], cleanText(e.text, urls)
		list := out[c]
		if i := slices.IndexFunc(list, func(x ErrorText) bool { return x.Text == t }); i >= 0 {
			list[i].Count += e.n
			continue
		}
		if len(list) < MaxErrorTexts {
			out[c] = append(list, ErrorText{Text: t, Count: e.n})
		}
	}
	return out
}

// cleanText redacts the run's URLs in s, replaces control characters
// (a status line comes from the server) and bounds its length.
func cleanText(s string, urls []string) string {
	for _, u := range urls {
		s = urlx.Scrub(s, u)
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '?'
		}
		return r
	}, s)
	if len(s) > maxTextLen {
		s = strings.ToValidUTF8(s[:maxTextLen], "") + "…"
	}
	return s
}

// setTexts renders the fixed error texts once.
func (e *Engine) setTexts() {
	t := e.opts.Timeout
	e.dialTimeoutText = fmt.Sprintf("connect: no connection within the %v timeout", t)
	e.timeoutText = fmt.Sprintf("no response byte within the %v timeout", t)
	e.partialText = fmt.Sprintf("response incomplete at the %v timeout", t)
	if re := e.opts.ExpectBody; re != nil {
		e.bodyText = "body does not match " + re.String()
	}
}

// errorText is the text of a failed request of cause; err is its
// transport error, nil for a failed check. Status mismatches keep their
// status line instead (stats.fail).
func (e *Engine) errorText(cause string, err error, r *response) string {
	var op *net.OpError
	switch {
	case cause == CauseTimeout && errors.As(err, &op) && op.Op == "dial":
		return e.dialTimeoutText
	case cause == CauseTimeout && r.bytesIn == 0:
		return e.timeoutText
	case cause == CauseTimeout:
		return e.partialText
	case cause == CauseBody:
		return e.bodyText
	case cause == CauseLength:
		return fmt.Sprintf("body length %d, the first response's %d", r.bodyLen, e.firstLen.Load())
	case err == nil:
		return cause
	}
	return errText(err)
}
