package probes

import (
	"encoding/binary"
	"fmt"
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
