package probes

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// connEnds are a TCP connection's two addresses as soakd's side sees
// them: Local its own end, Remote the server's.
type connEnds struct {
	Local, Remote netip.AddrPort
}

const (
	diagReqV2Len = 56 // struct inet_diag_req_v2
	// diagBatch requests go in one datagram, and their replies (one each,
	// about 1 KiB of receive buffer) must fit the socket's buffer (208
	// KiB by default): a reply the buffer cannot take is dropped.
	diagBatch = 64
)

// diagExact looks up, for each of ends, the server's end of the
// connection: the TCP socket whose local address is Remote and whose peer
// is Local. The kernel finds each in its hash tables (no walk of the
// tables), diagBatch requests to a datagram. fn gets the index in ends and
// the struct inet_diag_msg of each socket found; a lookup that finds none
// gets no call. With no established socket of that address, the kernel
// answers with the listener of its local address (a lookup of the
// connection's way in): fn must check the socket's state and peer.
func diagExact(buf []byte, ends []connEnds, fn func(i int, msg []byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_INET_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	// A reply lost to a full buffer would leave the receive waiting: a
	// second, at most, then this sample goes without the count.
	tv := unix.Timeval{Sec: 1}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("sock_diag timeout: %w", err)
	}
	req := make([]byte, 0, diagBatch*(nlmsgHdrLen+diagReqV2Len))
	for start := 0; start < len(ends); start += diagBatch {
		batch := ends[start:min(start+diagBatch, len(ends))]
		req = req[:0]
		for i, e := range batch {
			req = appendDiagExact(req, uint32(start+i), e)
		}
		if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return fmt.Errorf("sock_diag request: %w", err)
		}
		if err := diagReplies(fd, buf, start, len(batch), fn); err != nil {
			return err
		}
	}
	return nil
}

// diagReplies receives the n replies to the requests of one batch, whose
// sequence numbers are first to first+n-1.
func diagReplies(fd int, buf []byte, first, n int, fn func(i int, msg []byte)) error {
	for got := 0; got < n; {
		m, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag receive (%d of %d replies): %w", got, n, err)
		}
		k, err := parseDiagExact(buf[:m], func(seq uint32, msg []byte) {
			if i := int(seq); i >= first && i < first+n {
				fn(i, msg)
			}
		})
		if err != nil {
			return err
		}
		got += k
	}
	return nil
}

// appendDiagExact appends a request for the socket at e's server end: a
// netlink header and a struct inet_diag_req_v2 whose id is that socket's
// (source the server's address, destination soakd's), without the dump
// flag. seq numbers the reply.
func appendDiagExact(b []byte, seq uint32, e connEnds) []byte {
	le := binary.LittleEndian // netlink is host order; soakd runs on little-endian hosts
	b = le.AppendUint32(b, nlmsgHdrLen+diagReqV2Len)
	b = le.AppendUint16(b, unix.SOCK_DIAG_BY_FAMILY)
	b = le.AppendUint16(b, unix.NLM_F_REQUEST)
	b = le.AppendUint32(b, seq)
	b = le.AppendUint32(b, 0)
	family := byte(unix.AF_INET6)
	if e.Remote.Addr().Is4() && e.Local.Addr().Is4() {
		family = unix.AF_INET
	}
	b = append(b, family, unix.IPPROTO_TCP, 0, 0)
	b = le.AppendUint32(b, ^uint32(0)) // states: ignored by a lookup
	b = binary.BigEndian.AppendUint16(b, e.Remote.Port())
	b = binary.BigEndian.AppendUint16(b, e.Local.Port())
	b = appendDiagAddr(b, e.Remote.Addr(), family)
	b = appendDiagAddr(b, e.Local.Addr(), family)
	b = le.AppendUint32(b, 0)             // interface: any
	return le.AppendUint64(b, ^uint64(0)) // cookie: INET_DIAG_NOCOOKIE
}

// appendDiagAddr appends a's 16 bytes of an inet_diag_sockid: an IPv4
// address in the first 4, an IPv6 one (an IPv4 one mapped) whole.
func appendDiagAddr(b []byte, a netip.Addr, family byte) []byte {
	var x [16]byte
	if family == unix.AF_INET {
		v4 := a.As4()
		copy(x[:], v4[:])
	} else {
		x = netip.AddrFrom16(a.As16()).As16()
	}
	return append(b, x[:]...)
}

// parseDiagExact walks one datagram of replies to lookups, handing fn the
// sequence number and struct inet_diag_msg of each socket found; n counts
// the replies, a "no such socket" (ENOENT) among them.
func parseDiagExact(b []byte, fn func(seq uint32, msg []byte)) (n int, err error) {
	le := binary.LittleEndian
	for len(b) >= nlmsgHdrLen {
		l := int(le.Uint32(b))
		if l < nlmsgHdrLen || l > len(b) {
			return n, errDiagShort
		}
		n++
		switch le.Uint16(b[4:]) {
		case unix.NLMSG_ERROR:
			if l < nlmsgHdrLen+4 {
				return n, errDiagShort
			}
			if e := syscall.Errno(-int32(le.Uint32(b[nlmsgHdrLen:]))); e != 0 && e != unix.ENOENT {
				return n, fmt.Errorf("sock_diag lookup: %w", e)
			}
		case unix.SOCK_DIAG_BY_FAMILY:
			if l < nlmsgHdrLen+diagMsgLen {
				return n, errDiagShort
			}
			fn(le.Uint32(b[8:]), b[nlmsgHdrLen:l])
		default:
			n--
		}
		b = b[min((l+3)&^3, len(b)):]
	}
	return n, nil
}
