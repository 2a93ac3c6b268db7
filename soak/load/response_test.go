package load

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		head      bool
		status    int
		bodyLen   int64
		close     bool
		err       error
		remaining string // what must be left unread: the next response
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", false, 200, 5, false, nil, "NEXT"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n3\r\nabc\r\n0\r\nTrailer: 1\r\n\r\nNEXT", false, 200, 8, false, nil, "NEXT"},
		{"close header", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi", false, 200, 2, true, nil, ""},
		{"until EOF", "HTTP/1.1 200 OK\r\n\r\nall of it", false, 200, 9, true, nil, ""},
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\nNEXT", true, 200, 500, false, nil, "NEXT"},
		{"204", "HTTP/1.1 204 No Content\r\n\r\nNEXT", false, 204, -1, false, nil, "NEXT"},
		{"304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\nNEXT", false, 304, 10, false, nil, "NEXT"},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false, 200, 1, true, nil, ""},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nxNEXT", false, 200, 1, false, nil, "NEXT"},
		{"100 continue", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\nNEXT", false, 201, 0, false, nil, "NEXT"},
		{"LF only", "HTTP/1.1 200 OK\nContent-Length: 2\n\nokNEXT", false, 200, 2, false, nil, "NEXT"},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, 200, 10, false, io.ErrUnexpectedEOF, ""},
		{"nothing", "", false, 0, 0, false, io.EOF, ""},
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", false, 0, 0, false, errProtocol, ""},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, 200, 0, false, errProtocol, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tt.raw), 64)
			r, err := readResponse(br, tt.head, nil)
			if !errors.Is(err, tt.err) {
				t.Fatalf("got error %v; want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if r.status != tt.status || r.bodyLen != tt.bodyLen || r.close != tt.close {
				t.Errorf("got status %d len %d close %v; want %d %d %v", r.status, r.bodyLen, r.close, tt.status, tt.bodyLen, tt.close)
			}
			rest, _ := io.ReadAll(br)
			if string(rest) != tt.remaining {
				t.Errorf("got %q left; want %q", rest, tt.remaining)
			}
			if want := len(tt.raw) - len(tt.remaining); r.bytesIn != want {
				t.Errorf("got %d bytes in; want %d", r.bytesIn, want)
			}
		})
	}
}

func TestBodyBufIsBounded(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("a", 100)
	b := &bodyBuf{buf: make([]byte, 0, 10)}
	if _, err := readResponse(bufio.NewReaderSize(strings.NewReader(raw), 64), false, b); err != nil {
		t.Fatal(err)
	}
	if string(b.buf) != strings.Repeat("a", 10) {
		t.Errorf("got %q; want the first 10 bytes", b.buf)
	}
}

// FuzzReadResponse checks that no input makes the parser panic, loop, or
// report more bytes than it was given.
func FuzzReadResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false)
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", false)
	f.Add("HTTP/1.0 204 No Content\r\n\r\n", true)
	f.Fuzz(func(t *testing.T, raw string, head bool) {
		r, _ := readResponse(bufio.NewReaderSize(strings.NewReader(raw), 64), head, &bodyBuf{buf: make([]byte, 0, 8)})
		if r.bytesIn > len(raw) {
			t.Errorf("got %d bytes in from %d", r.bytesIn, len(raw))
		}
	})
}
