package load

import (
	"bytes"
	"io"
)

// Parser states of streamParser.
const (
	psHead      = iota // status line and header lines
	psBody             // Content-Length body: rem bytes left
	psChunkSize        // a chunk-size line
	psChunkData        // rem bytes of chunk data left
	psChunkEnd         // the empty line after chunk data
	psTrailer          // trailer lines up to an empty one
	psEOF              // body delimited by the end of the connection
	psDone
)

// streamParser is readResponse as a state machine fed whatever bytes a
// non-blocking read returned, for the event-loop workers. It keeps an
// incomplete line (at most readBuf bytes) between feeds and never the
// body, except the bounded prefix in bodyBuf. Its results (status, body
// length, bytes in, close, errors) are readResponse's on the same bytes,
// however they are split (TestStreamParserMatchesReadResponse).
type streamParser struct {
	r       response
	st      int
	rem     int64
	head    bool // the request was HEAD: no body
	inHead  bool // psHead: the status line has been read
	keep    bool // psHead: keep-alive so far
	partial []byte
}

// reset prepares for the response to a new request.
func (p *streamParser) reset(head bool) {
	p.r = response{}
	p.st, p.rem, p.head, p.inHead, p.keep = psHead, 0, head, false, false
	p.partial = p.partial[:0]
}

// feed consumes b. It returns done when the response is complete; bytes
// after the end of a response are not consumed (extra reports them).
func (p *streamParser) feed(b []byte, body *bodyBuf) (done bool, extra int, err error) {
	for len(b) > 0 && p.st != psDone {
		switch p.st {
		case psBody, psChunkData, psEOF:
			n := len(b)
			if p.st != psEOF && int64(n) > p.rem {
				n = int(p.rem)
			}
			body.keep(b[:n])
			p.r.bytesIn += n
			b = b[n:]
			if p.st == psEOF {
				p.r.bodyLen += int64(n)
				continue
			}
			p.rem -= int64(n)
			if p.rem == 0 {
				if p.st == psBody {
					p.st = psDone
				} else {
					p.st = psChunkEnd
				}
			}
		default:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				if len(p.partial)+len(b) >= readBuf {
					return false, 0, errProtocol // as bufio.ErrBufferFull
				}
				p.partial = append(p.partial, b...)
				p.r.bytesIn += len(b)
				return false, 0, nil
			}
			line := b[:i+1]
			p.r.bytesIn += len(line)
			b = b[i+1:]
			if len(p.partial)+len(line) > readBuf { // as bufio.ErrBufferFull
				return false, 0, errProtocol
			}
			if len(p.partial) > 0 {
				p.partial = append(p.partial, line...)
				line = p.partial
			}
			line = line[:len(line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			err := p.line(line)
			p.partial = p.partial[:0]
			if err != nil {
				return false, 0, err
			}
		}
	}
	return p.st == psDone, len(b), nil
}

// line handles one complete line in a line state.
func (p *streamParser) line(line []byte) error {
	r := &p.r
	switch p.st {
	case psHead:
		if !p.inHead {
			if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
				return errProtocol
			}
			r.status = atoi3(line[9:12])
			if r.status < 100 || r.status > 599 {
				return errProtocol
			}
			r.setStatusLine(line)
			p.keep, p.inHead = line[7] == '1', true
			r.bodyLen = -1
			return nil
		}
		if len(line) > 0 {
			p.keep = r.header(line, p.keep)
			return nil
		}
		p.endHead()
	case psChunkSize:
		size, ok := parseHex(line)
		if !ok {
			return errProtocol
		}
		if size == 0 {
			p.st = psTrailer
		} else {
			r.bodyLen += size
			p.st, p.rem = psChunkData, size
		}
	case psChunkEnd:
		if len(line) != 0 {
			return errProtocol
		}
		p.st = psChunkSize
	case psTrailer:
		if len(line) == 0 {
			p.st = psDone
		}
	}
	return nil
}

// endHead decides what follows a complete head, as readResponse does.
func (p *streamParser) endHead() {
	r := &p.r
	keepAliveDefault := p.keep && !r.close
	p.inHead = false
	if r.status < 200 && r.status != 101 { // interim: another head follows
		return
	}
	if !keepAliveDefault || r.status == 101 {
		r.close = true
	}
	switch {
	case p.head || r.status == 204 || r.status == 304 || r.status == 101:
		p.st = psDone
	case r.bodyLen >= 0:
		p.st, p.rem = psBody, r.bodyLen
		if p.rem == 0 {
			p.st = psDone
		}
	case r.bodyLen == -2:
		r.bodyLen = 0
		p.st = psChunkSize
	default:
		r.bodyLen, r.close = 0, true
		p.st = psEOF
	}
}

// eof is the end of the connection: the end of an EOF-delimited body, or
// an error (io.EOF when not a byte of the response had come, so a reused
// connection the server had closed can be retried).
func (p *streamParser) eof() error {
	switch {
	case p.st == psEOF:
		p.st = psDone
		return nil
	case p.st == psDone:
		return nil
	case p.r.bytesIn == 0:
		return io.EOF
	}
	return io.ErrUnexpectedEOF
}
