package load

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// streamOutcome feeds raw to a streamParser in pieces cut at cuts and
// ends with the connection closing, as the event loop does.
func streamOutcome(raw string, head bool, cuts []int, body *bodyBuf) (response, error) {
	var p streamParser
	p.reset(head)
	prev := 0
	for _, c := range append(cuts, len(raw)) {
		if c <= prev {
			continue
		}
		done, _, err := p.feed([]byte(raw[prev:c]), body)
		if err != nil || done {
			return p.r, err
		}
		prev = c
	}
	return p.r, p.eof()
}

// sameOutcome compares a stream parse with readResponse on the same bytes
// (read to the end, so that a body delimited by EOF ends the same way).
func sameOutcome(t *testing.T, raw string, head bool, cuts []int) {
	t.Helper()
	want, wantErr := readResponse(bufio.NewReaderSize(strings.NewReader(raw), readBuf), head, nil)
	got, gotErr := streamOutcome(raw, head, cuts, nil)
	if errKind(gotErr) != errKind(wantErr) {
		t.Fatalf("%q cut at %v: got error %v; readResponse gives %v", raw, cuts, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if got != want {
		t.Fatalf("%q cut at %v: got %+v; readResponse gives %+v", raw, cuts, got, want)
	}
}

func errKind(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, errProtocol):
		return "protocol"
	}
	return err.Error()
}

var streamCases = []struct {
	raw  string
	head bool
}{
	{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n3\r\nabc\r\n0\r\nTrailer: 1\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi", false},
	{"HTTP/1.1 200 OK\r\n\r\nall of it", false},
	{"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", true},
	{"HTTP/1.1 204 No Content\r\n\r\n", false},
	{"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false},
	{"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false},
	{"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", false},
	{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false},
	{"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false},
	{"HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy", false},
	{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false}, // short body
	{"", false},                        // nothing
	{"HTTP/1.1 200 O", false},          // cut in the head
	{"SSH-2.0-OpenSSH\r\n\r\n", false}, // not HTTP
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false}, // bad chunk size
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", false},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab", false}, // cut in a chunk
}

// Every case, cut into two pieces at every byte and fed a byte at a time,
// gives what readResponse gives.
func TestStreamParserMatchesReadResponse(t *testing.T) {
	for _, tc := range streamCases {
		sameOutcome(t, tc.raw, tc.head, nil)
		for i := 1; i < len(tc.raw); i++ {
			sameOutcome(t, tc.raw, tc.head, []int{i})
		}
		var each []int
		for i := 1; i < len(tc.raw); i++ {
			each = append(each, i)
		}
		sameOutcome(t, tc.raw, tc.head, each)
	}
}

func TestStreamParserLimits(t *testing.T) {
	long := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", readBuf) + "\r\n\r\n"
	for _, cuts := range [][]int{nil, {30}, {readBuf / 2, readBuf + 10}} {
		if _, err := streamOutcome(long, false, cuts, nil); !errors.Is(err, errProtocol) {
			t.Errorf("a %d-byte header line cut at %v: got %v; want a protocol error", readBuf, cuts, err)
		}
	}
	raw := "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("a", 100) + "NEXT"
	var p streamParser
	p.reset(false)
	b := &bodyBuf{buf: make([]byte, 0, 10)}
	done, extra, err := p.feed([]byte(raw), b)
	if !done || err != nil || extra != 4 || string(b.buf) != strings.Repeat("a", 10) {
		t.Errorf("got done %v extra %d err %v body %q; want done, 4 extra bytes, the first 10 body bytes", done, extra, err, b.buf)
	}
}

// FuzzStreamParser holds the stream parser to readResponse on any input
// and any cut.
func FuzzStreamParser(f *testing.F) {
	for _, tc := range streamCases {
		f.Add(tc.raw, tc.head, uint16(7))
	}
	f.Fuzz(func(t *testing.T, raw string, head bool, cut uint16) {
		var cuts []int
		if n := len(raw); n > 0 {
			cuts = []int{int(cut) % n}
		}
		sameOutcome(t, raw, head, cuts)
	})
}
