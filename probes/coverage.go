package probes

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/soakd/soakd/soak/urlx"
)

// Coverage says whether the sampled process tree serves one endpoint.
type Coverage struct {
	// Addr is the endpoint's host:port.
	Addr string
	// Covered is true when the owner of the listening socket on Addr's
	// port is the root or one of its descendants (for a unit, a process
	// of its cgroup).
	Covered bool
	// Why says, when not covered, who serves Addr instead, e.g. "pid
	// 1234 (nginx: worker), not in the sampled tree" or "not on this
	// machine".
	Why string
}

// String is Addr, with Why when it is not covered.
func (c Coverage) String() string {
	if c.Covered {
		return c.Addr
	}
	return c.Addr + " (" + c.Why + ")"
}

// resolveTimeout bounds the lookup of an endpoint's host name.
const resolveTimeout = 2 * time.Second

// Cover tells whether the tree soakd samples serves rawURL. It scans
// every process's open files for the owner of the URL's port, as a
// lookup by port does, so it is meant for the start of a run, once per
// host:port.
func (t *Target) Cover(ctx context.Context, rawURL string) Coverage {
	a, err := urlx.ParseAddr(rawURL)
	if err != nil {
		return Coverage{Addr: rawURL, Why: fmt.Sprintf("URL %v", err)}
	}
	c := Coverage{Addr: a.String()}
	if !isLocalHost(ctx, a.Host) {
		c.Why = "not on this machine"
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.kind == kindPort && a.Port == t.port {
		c.Covered = true // the target was found as this port's owner
		return c
	}
	c.Covered, c.Why = t.coverPort(ctx, a.Port)
	return c
}

// coverPort finds the owner of port's listening socket and tells whether
// it is in the tree. The caller holds mu.
func (t *Target) coverPort(ctx context.Context, port uint16) (bool, string) {
	want := t.listenInodes(port)
	if len(want) == 0 {
		return false, "no process listens on it here"
	}
	owners, denied := t.socketOwners(ctx, want)
	roots := rootsOf(owners)
	for _, o := range owners {
		if t.inTree(o) {
			return true, ""
		}
	}
	switch {
	case len(roots) > 0:
		return false, describeProcs(roots) + ", not in the sampled tree"
	case denied > 0:
		return false, fmt.Sprintf("its owner is not visible: /proc/PID/fd of %d processes could not be read", denied)
	}
	return false, "no process here owns its socket (another network namespace?)"
}

// maxTreeDepth bounds the walk up from a process to the root.
const maxTreeDepth = 256

// inTree says whether c is the root or one of its descendants, or for a
// unit, a process of its cgroup. The caller holds mu.
func (t *Target) inTree(c candidate) bool {
	if t.kind.cgroup {
		return slices.Contains(t.pids, c.ID.PID)
	}
	for range maxTreeDepth {
		if c.ID == t.root {
			return true
		}
		if c.PPID <= 1 {
			return false
		}
		var ok bool
		if c, ok = t.statCandidate(c.PPID); !ok {
			return false
		}
	}
	return false
}

// isLocalHost says whether host is this machine: localhost, a loopback
// address, or an address of one of its interfaces (a host name counts
// when any address it resolves to does).
func isLocalHost(ctx context.Context, host string) bool {
	if host == "localhost" {
		return true
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return false
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	local, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() || slices.ContainsFunc(local, func(a net.Addr) bool {
			n, ok := a.(*net.IPNet)
			return ok && n.IP.Equal(ip)
		}) {
			return true
		}
	}
	return false
}
