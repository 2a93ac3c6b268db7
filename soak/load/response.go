package load

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errProtocol marks a response that is not valid HTTP/1.x.
var errProtocol = errors.New("malformed HTTP response")

// response is what the engine keeps of one HTTP response: never the body,
// except the bounded prefix in bodyBuf when a body pattern must match.
type response struct {
	status  int
	bodyLen int64
	bytesIn int
	close   bool // the connection cannot be reused

	// statusLine is the start of the last status line, kept for the
	// error text of a status mismatch.
	statusLine [maxStatusLine]byte
	statusLen  uint8
}

// maxStatusLine is the part of a status line kept in response.
const maxStatusLine = 64

// setStatusLine keeps the start of line.
func (r *response) setStatusLine(line []byte) {
	r.statusLen = uint8(copy(r.statusLine[:], line))
}

// statusText is the kept status line.
func (r *response) statusText() []byte { return r.statusLine[:r.statusLen] }

// bodyBuf keeps at most cap(buf) bytes of a body for ExpectBody.
type bodyBuf struct {
	buf []byte
}

func (b *bodyBuf) keep(p []byte) {
	if b == nil {
		return
	}
	room := cap(b.buf) - len(b.buf)
	if len(p) > room {
		p = p[:room]
	}
	b.buf = append(b.buf, p...)
}

// readResponse reads one whole response from br. It skips interim 1xx
// responses (other than 101) and discards the body as it reads it.
func readResponse(br *bufio.Reader, head bool, body *bodyBuf) (response, error) {
	var r response
	for {
		keepAliveDefault, err := r.readHead(br)
		if err != nil {
			return r, err
		}
		if r.status >= 200 || r.status == 101 {
			if !keepAliveDefault || r.status == 101 {
				r.close = true
			}
			break
		}
	}
	if head || r.status == 204 || r.status == 304 || r.status == 101 {
		return r, nil
	}
	return r, r.readBody(br, body)
}

// headInfo is what readHead learns from the header lines.
type headInfo struct {
	contentLength int64 // -1 when absent
	chunked       bool
}

// readHead reads the status line and headers. It returns whether the
// connection stays open by default (HTTP/1.1, or HTTP/1.0 with keep-alive).
func (r *response) readHead(br *bufio.Reader) (bool, error) {
	line, err := r.line(br)
	if err != nil {
		return false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return false, errProtocol
	}
	r.status = atoi3(line[9:12])
	if r.status < 100 || r.status > 599 {
		return false, errProtocol
	}
	r.setStatusLine(line)
	keep := line[7] == '1'
	r.bodyLen = -1
	for {
		line, err := r.line(br)
		if err != nil {
			return false, err
		}
		if len(line) == 0 {
			return keep && !r.close, nil
		}
		keep = r.header(line, keep)
	}
}

// header interprets one header line; it returns the updated keep-alive.
func (r *response) header(line []byte, keep bool) bool {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return keep
	}
	// The length first: EqualFold compares byte by byte before it looks
	// at the lengths, and most headers are none of these three.
	name := line[:i]
	switch len(name) {
	case len("Content-Length"):
		if bytes.EqualFold(name, []byte("Content-Length")) {
			r.bodyLen = parseLength(bytes.TrimSpace(line[i+1:]))
		}
	case len("Transfer-Encoding"):
		if bytes.EqualFold(name, []byte("Transfer-Encoding")) {
			val := bytes.TrimSpace(line[i+1:])
			if n := len(val); n >= 7 && bytes.EqualFold(val[n-7:], []byte("chunked")) {
				r.bodyLen = -2
			}
		}
	case len("Connection"):
		if bytes.EqualFold(name, []byte("Connection")) {
			val := bytes.TrimSpace(line[i+1:])
			if bytes.EqualFold(val, []byte("close")) {
				r.close = true
			} else if bytes.EqualFold(val, []byte("keep-alive")) {
				keep = true
			}
		}
	}
	return keep
}

// line returns one header line without its CR LF, counting its bytes.
func (r *response) line(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	r.bytesIn += len(line)
	if err != nil {
		if err == io.EOF && r.bytesIn > 0 {
			err = io.ErrUnexpectedEOF
		}
		if err == bufio.ErrBufferFull {
			err = errProtocol
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// readBody reads the body framed by Content-Length, chunks, or EOF.
func (r *response) readBody(br *bufio.Reader, body *bodyBuf) error {
	switch {
	case r.bodyLen >= 0:
		return r.discard(br, r.bodyLen, body)
	case r.bodyLen == -2:
		r.bodyLen = 0
		return r.readChunked(br, body)
	}
	r.bodyLen = 0
	r.close = true
	for {
		n, err := r.discardSome(br, 1<<30, body)
		r.bodyLen += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readChunked reads a chunked body and its trailer.
func (r *response) readChunked(br *bufio.Reader, body *bodyBuf) error {
	for {
		line, err := r.line(br)
		if err != nil {
			return noEOF(err)
		}
		size, ok := parseHex(line)
		if !ok {
			return errProtocol
		}
		if size == 0 {
			break
		}
		if err := r.discard(br, size, body); err != nil {
			return err
		}
		r.bodyLen += size
		if line, err = r.line(br); err != nil || len(line) != 0 {
			return noEOF(orProtocol(err))
		}
	}
	for { // trailer
		line, err := r.line(br)
		if err != nil {
			return noEOF(err)
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// discard reads exactly n body bytes.
func (r *response) discard(br *bufio.Reader, n int64, body *bodyBuf) error {
	for n > 0 {
		k, err := r.discardSome(br, n, body)
		n -= int64(k)
		if err != nil {
			return noEOF(err)
		}
	}
	return nil
}

// discardSome consumes up to max buffered bytes, filling the buffer first
// when it is empty, and keeps a prefix in body when asked.
func (r *response) discardSome(br *bufio.Reader, max int64, body *bodyBuf) (int, error) {
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			return 0, err
		}
	}
	n := br.Buffered()
	if int64(n) > max {
		n = int(max)
	}
	if body != nil {
		p, _ := br.Peek(n)
		body.keep(p)
	}
	k, err := br.Discard(n)
	r.bytesIn += k
	return k, err
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func orProtocol(err error) error {
	if err == nil {
		return errProtocol
	}
	return err
}

func atoi3(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// parseLength parses a Content-Length value; -1 when invalid.
func parseLength(b []byte) int64 {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// parseHex parses a chunk-size line, ignoring chunk extensions.
func parseHex(b []byte) (int64, bool) {
	if i := bytes.IndexByte(b, ';'); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}
