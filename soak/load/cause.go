package load

import (
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
)

// causes lists every cause in report order; causeIndex maps back.
var causes = [...]string{
	CauseConnRefused, CauseReset, CauseTimeout, CauseAddress, CauseFDUnavail,
	CauseTLS, CauseStatus, CauseBody, CauseLength, CauseOther,
}

const nCauses = len(causes)

func causeIndex(c string) int {
	for i, s := range causes {
		if s == c {
			return i
		}
	}
	return nCauses - 1
}

// Causes returns every cause in report order.
func Causes() []string { return slices.Clone(causes[:]) }

// classify maps a transport error to one of the Cause* constants.
func classify(err error) string {
	if isTLS(err) {
		return CauseTLS
	}
	return classifyTransport(err)
}

// classifyTransport is classify for the errors of the connection itself.
func classifyTransport(err error) string {
	var dnsErr *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &dnsErr):
		return CauseAddress
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseConnRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNABORTED):
		return CauseReset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return CauseTimeout
	case errors.Is(err, syscall.EADDRNOTAVAIL),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return CauseAddress
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return CauseFDUnavail
	}
	return CauseOther
}

// connLost tells whether err means the peer closed a connection before
// answering, so a request on a reused keep-alive connection may be retried.
func connLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}
