package probes

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// TCP states as /proc/net/tcp writes them (include/net/tcp_states.h).
const (
	tcpEstablished = 0x01
	tcpTimeWait    = 0x06
	tcpCloseWait   = 0x08
	tcpListen      = 0x0A
)

// tcpEntry is one socket row of /proc/net/tcp or /proc/net/tcp6.
type tcpEntry struct {
	LocalPort uint16
	State     uint8
	Inode     uint64
}

// Errors of parseTCPLine; tests compare against them.
var (
	errTCPShort   = errors.New("tcp: fewer than 10 fields")
	errTCPNoPort  = errors.New("tcp: local address has no ':'")
	errTCPBadSlot = errors.New("tcp: first field is not \"N:\"")
)

// parseTCPLine parses one data row of /proc/net/tcp{,6}:
//
//	sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
func parseTCPLine(line []byte) (tcpEntry, error) {
	var e tcpEntry
	f := bytes.Fields(line)
	if len(f) < 10 {
		return e, errTCPShort
	}
	if !bytes.HasSuffix(f[0], []byte(":")) {
		return e, errTCPBadSlot
	}
	i := bytes.LastIndexByte(f[1], ':')
	if i < 0 {
		return e, errTCPNoPort
	}
	port, err := strconv.ParseUint(string(f[1][i+1:]), 16, 16)
	if err != nil {
		return e, fmt.Errorf("tcp: local port: %w", err)
	}
	st, err := strconv.ParseUint(string(f[3]), 16, 8)
	if err != nil {
		return e, fmt.Errorf("tcp: state: %w", err)
	}
	ino, err := strconv.ParseUint(string(f[9]), 10, 64)
	if err != nil {
		return e, fmt.Errorf("tcp: inode: %w", err)
	}
	return tcpEntry{LocalPort: uint16(port), State: uint8(st), Inode: ino}, nil
}

// parseNetTCP calls fn for each well-formed row of a /proc/net/tcp{,6}
// table. The header line is skipped; malformed rows are skipped too (a
// torn read at a page boundary is possible) and counted in skipped, with
// the first one's error in firstErr.
func parseNetTCP(b []byte, fn func(tcpEntry)) (skipped int, firstErr error) {
	first := true
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if first {
			first = false
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := parseTCPLine(line)
		if err != nil {
			if skipped == 0 {
				firstErr = err
			}
			skipped++
			continue
		}
		fn(e)
	}
	return skipped, firstErr
}

// tcpCounts is the tree's TCP sockets by state.
type tcpCounts struct {
	Established, CloseWait, TimeWait, Listen int
}

// tcpCounter counts the sockets of one sample. Owned holds the socket
// inodes found in the tree's fd dirs. TIME_WAIT rows have no owner (inode
// 0), so they are counted when their local port is one the tree listens on.
type tcpCounter struct {
	owned     map[uint64]struct{}
	listening map[uint16]struct{}
	timeWait  map[uint16]int
	counts    tcpCounts
}

func newTCPCounter() *tcpCounter {
	return &tcpCounter{
		owned:     make(map[uint64]struct{}),
		listening: make(map[uint16]struct{}),
		timeWait:  make(map[uint16]int),
	}
}

// reset empties the counter for a new sample, keeping its maps' storage.
func (c *tcpCounter) reset() {
	clear(c.owned)
	clear(c.listening)
	clear(c.timeWait)
	c.counts = tcpCounts{}
}

// resetTables forgets the rows read so far but keeps the owned inodes.
func (c *tcpCounter) resetTables() {
	clear(c.listening)
	clear(c.timeWait)
	c.counts = tcpCounts{}
}

// add is the parseNetTCP callback.
func (c *tcpCounter) add(e tcpEntry) {
	if e.State == tcpTimeWait {
		c.timeWait[e.LocalPort]++
		return
	}
	if _, ok := c.owned[e.Inode]; !ok || e.Inode == 0 {
		return
	}
	switch e.State {
	case tcpEstablished:
		c.counts.Established++
	case tcpCloseWait:
		c.counts.CloseWait++
	case tcpListen:
		c.counts.Listen++
		c.listening[e.LocalPort] = struct{}{}
	}
}

// result finishes the sample: TIME_WAIT rows on a listening port count.
func (c *tcpCounter) result() tcpCounts {
	out := c.counts
	for port := range c.listening {
		out.TimeWait += c.timeWait[port]
	}
	return out
}
