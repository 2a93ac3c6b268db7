package probes

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// ListenCounters are the TcpExt counters of a network namespace that tell
// of a full accept queue (/proc/PID/net/netstat): ListenOverflows counts
// the handshakes dropped because a listener's accept queue was full,
// ListenDrops every drop at a listener (overflows included), and
// SynRetrans the SYNs retransmitted by the namespace's own clients, which
// a dropped handshake makes them send after 1 s, 3 s, 7 s…
type ListenCounters struct {
	ListenOverflows uint64 `json:"listen_overflows"`
	ListenDrops     uint64 `json:"listen_drops"`
	SynRetrans      uint64 `json:"syn_retrans"`
}

// Sub is c − b, each counter on its own; a counter that went back (a new
// namespace) counts from zero.
func (c ListenCounters) Sub(b ListenCounters) ListenCounters {
	d := func(x, y uint64) uint64 {
		if x < y {
			return x
		}
		return x - y
	}
	return ListenCounters{d(c.ListenOverflows, b.ListenOverflows), d(c.ListenDrops, b.ListenDrops), d(c.SynRetrans, b.SynRetrans)}
}

// ReadListenCounters reads the listen counters of the network namespace
// of process pid (0: soakd's own) from the proc tree at procRoot
// ("" = /proc). It parses with prometheus/procfs, which knows every
// TcpExt field of the kernels in use.
func ReadListenCounters(procRoot string, pid int) (ListenCounters, error) {
	if procRoot == "" {
		procRoot = procfs.DefaultMountPoint
	}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return ListenCounters{}, fmt.Errorf("netstat: %w", err)
	}
	p, err := fs.Self()
	if pid > 0 {
		p, err = fs.Proc(pid)
	}
	if err != nil {
		return ListenCounters{}, fmt.Errorf("netstat: %w", err)
	}
	ns, err := p.Netstat()
	if err != nil {
		return ListenCounters{}, fmt.Errorf("netstat of pid %d: %w", p.PID, err)
	}
	v := func(f *float64) uint64 {
		if f == nil {
			return 0
		}
		return uint64(*f)
	}
	return ListenCounters{v(ns.ListenOverflows), v(ns.ListenDrops), v(ns.TCPSynRetrans)}, nil
}
