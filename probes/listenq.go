package probes

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Offsets in struct inet_diag_msg (linux/inet_diag.h).
const (
	diagRqueueOff = 56 // idiag_rqueue: a listener's accept queue length
	diagWqueueOff = 60 // idiag_wqueue: a listener's backlog limit
)

// ListenQueue is the kernel's view of a TCP port, from sock_diag: its
// listeners' accept queue (connections the handshake completed that the
// server has not accepted yet) against its limit, min(backlog,
// net.core.somaxconn), and the established connections whose local port
// it is. Listeners counts the listening sockets (two with IPv4 and IPv6,
// more with SO_REUSEPORT); Queue and Limit are their sums.
type ListenQueue struct {
	Listeners   int `json:"listeners"`
	Queue       int `json:"accept_queue"`
	Limit       int `json:"accept_queue_limit"`
	Established int `json:"established"`
}

// ReadListenQueue asks sock_diag about port in soakd's network namespace
// (a netlink socket sees only its own).
func ReadListenQueue(port uint16) (ListenQueue, error) {
	var q ListenQueue
	buf := make([]byte, 64<<10)
	err := diagDumpStates(buf, 1<<tcpEstablished|1<<tcpListen, func(m []byte) {
		if binary.BigEndian.Uint16(m[4:]) != port {
			return
		}
		switch m[1] {
		case tcpListen:
			le := binary.LittleEndian
			q.Listeners++
			q.Queue += int(le.Uint32(m[diagRqueueOff:]))
			q.Limit += int(le.Uint32(m[diagWqueueOff:]))
		case tcpEstablished:
			q.Established++
		}
	})
	if err != nil {
		return ListenQueue{}, fmt.Errorf("listen queue of port %d: %w", port, err)
	}
	return q, nil
}

// diagDumpStates is diagDump for the given states, handing fn each raw
// struct inet_diag_msg.
func diagDumpStates(buf []byte, states uint32, fn func(msg []byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_INET_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	req := diagRequest()
	binary.LittleEndian.PutUint32(req[nlmsgHdrLen+52:], states)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sock_diag request: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag receive: %w", err)
		}
		done, err := parseDiagRaw(buf[:n], fn)
		if done || err != nil {
			return err
		}
	}
}

// parseDiagRaw walks one datagram of a sock_diag dump, handing fn each
// struct inet_diag_msg whole (the census reads its state, port and inode,
// parseDiagMessages; the listen queue reader its queue lengths). done is
// true at NLMSG_DONE.
func parseDiagRaw(b []byte, fn func(msg []byte)) (done bool, err error) {
	le := binary.LittleEndian
	for len(b) >= nlmsgHdrLen {
		l := int(le.Uint32(b))
		if l < nlmsgHdrLen || l > len(b) {
			return false, errDiagShort
		}
		switch le.Uint16(b[4:]) {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if l >= nlmsgHdrLen+4 {
				return true, fmt.Errorf("sock_diag: %w", syscall.Errno(-int32(le.Uint32(b[nlmsgHdrLen:]))))
			}
			return true, errDiagShort
		}
		if l < nlmsgHdrLen+diagMsgLen {
			return false, errDiagShort
		}
		fn(b[nlmsgHdrLen:l])
		b = b[min((l+3)&^3, len(b)):]
	}
	return false, nil
}
