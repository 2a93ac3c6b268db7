package load

import (
	"bufio"
	"strings"
	"testing"
)

// FuzzResponse holds both HTTP/1.1 response parsers to one another and to
// their input: on any bytes, cut anywhere and fed in any pieces, they
// agree; neither reports more bytes than it was given; a response that
// parses has a status in 100..599, a body length >= 0 and a kept body
// prefix that is bytes of the input; and bytes past the end of a response
// are handed back, not eaten, so the next response on the connection
// parses from where this one ended.
func FuzzResponse(f *testing.F) {
	for _, tc := range streamCases {
		f.Add(tc.raw, tc.head, uint16(5), uint16(17), uint8(8))
	}
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", false, uint16(3), uint16(40), uint8(1))
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", false, uint16(0), uint16(0), uint8(0))
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 999999999999999999\r\n\r\nx", false, uint16(1), uint16(2), uint8(3))
	f.Add("HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n\r\n\x81\x00", false, uint16(9), uint16(9), uint8(2))
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n", false, uint16(30), uint16(31), uint8(4))
	f.Fuzz(func(t *testing.T, raw string, head bool, cut1, cut2 uint16, bodyCap uint8) {
		checkReadResponse(t, raw, head, int(bodyCap))
		var cuts []int
		if n := len(raw); n > 0 {
			a, b := int(cut1)%n, int(cut2)%n
			if a > b {
				a, b = b, a
			}
			cuts = []int{a, b}
		}
		sameOutcome(t, raw, head, cuts)
		checkStreamRest(t, raw, head, cuts, int(bodyCap))
	})
}

// checkReadResponse parses raw with readResponse and checks what it says
// against raw itself.
func checkReadResponse(t *testing.T, raw string, head bool, bodyCap int) {
	t.Helper()
	body := &bodyBuf{buf: make([]byte, 0, bodyCap)}
	sr := strings.NewReader(raw)
	br := bufio.NewReaderSize(sr, readBuf)
	r, err := readResponse(br, head, body)
	if r.bytesIn > len(raw) {
		t.Fatalf("%q: got %d bytes in; the input has %d", raw, r.bytesIn, len(raw))
	}
	if len(body.buf) > bodyCap {
		t.Fatalf("%q: kept %d body bytes; the cap is %d", raw, len(body.buf), bodyCap)
	}
	if err != nil {
		return
	}
	if r.status < 100 || r.status > 599 {
		t.Fatalf("%q: got status %d with no error", raw, r.status)
	}
	if bodyless(r.status, head) {
		if len(body.buf) != 0 {
			t.Fatalf("%q: status %d (head %v) kept body %q", raw, r.status, head, body.buf)
		}
	} else if r.bodyLen < 0 || int64(r.bytesIn) < r.bodyLen || int64(len(body.buf)) > r.bodyLen {
		t.Fatalf("%q: body of %d bytes (%d kept) in a response of %d", raw, r.bodyLen, len(body.buf), r.bytesIn)
	}
	// A chunked body is kept without its chunk lines: not a substring.
	chunked := strings.Contains(strings.ToLower(raw), "chunked")
	if !chunked && !strings.Contains(raw[:r.bytesIn], string(body.buf)) {
		t.Fatalf("%q: kept body %q is not in the input", raw, body.buf)
	}
	if rest := br.Buffered() + sr.Len(); r.bytesIn+rest != len(raw) {
		t.Fatalf("%q: %d bytes in + %d left != %d", raw, r.bytesIn, rest, len(raw))
	}
}

// bodyless reports whether a response has no body whatever its headers.
func bodyless(status int, head bool) bool {
	return head || status == 204 || status == 304 || status == 101
}

// checkStreamRest feeds raw to a streamParser in the pieces cuts makes and
// checks that what a complete response leaves is exactly the unread tail.
func checkStreamRest(t *testing.T, raw string, head bool, cuts []int, bodyCap int) {
	t.Helper()
	var p streamParser
	p.reset(head)
	body := &bodyBuf{buf: make([]byte, 0, bodyCap)}
	prev := 0
	for _, c := range append(cuts, len(raw)) {
		if c <= prev {
			continue
		}
		done, extra, err := p.feed([]byte(raw[prev:c]), body)
		if err != nil {
			return
		}
		if extra < 0 || extra > c-prev {
			t.Fatalf("%q: fed %d bytes, %d handed back", raw, c-prev, extra)
		}
		if !done {
			if extra != 0 {
				t.Fatalf("%q: not done, yet %d bytes handed back", raw, extra)
			}
			prev = c
			continue
		}
		if used := c - extra; p.r.bytesIn != used {
			t.Fatalf("%q: done after %d bytes; counted %d", raw, used, p.r.bytesIn)
		}
		if len(body.buf) > bodyCap {
			t.Fatalf("%q: kept %d body bytes; the cap is %d", raw, len(body.buf), bodyCap)
		}
		return
	}
}
