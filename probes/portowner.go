package probes

import (
	"context"
	"fmt"
	"net"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// localPort returns the port of rawURL when its host is on this machine
// (localhost or a loopback address).
func localPort(rawURL string) (uint16, error) {
	if rawURL == "" {
		return 0, fmt.Errorf("no URL to find the server by its port")
	}
	a, err := urlx.ParseAddr(rawURL)
	if err != nil {
		return 0, fmt.Errorf("URL %w", err)
	}
	ip := net.ParseIP(a.Host)
	if a.Host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0, fmt.Errorf("the URL's host %q is not local, so its port owner cannot be looked up", a.Host)
	}
	return a.Port, nil
}

// listenInodes returns the inodes of the LISTEN sockets on port, from the
// tcp and tcp6 tables of the procfs root (soakd's network namespace).
func (t *Target) listenInodes(port uint16) map[uint64]struct{} {
	inodes := map[uint64]struct{}{}
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := t.fs.readSlow(t.fs.root + "/" + name) // a line per socket: long on a busy host
		if err != nil {
			continue // no IPv6, say
		}
		parseNetTCP(b, func(e tcpEntry) {
			if e.State == tcpListen && e.LocalPort == port && e.Inode != 0 {
				inodes[e.Inode] = struct{}{}
			}
		})
	}
	return inodes
}

// locatePort finds the process that owns the listening socket on the URL's
// port: the root among the owners (a prefork master, not its workers).
func (t *Target) locatePort(ctx context.Context) (procID, error) {
	want := t.listenInodes(t.port)
	if len(want) == 0 {
		return procID{}, field.Errorf("target", "no process listens on TCP port %d (from the URL); start the server or set %s", t.port, KindFlags("or"))
	}
	owners, denied := t.socketOwners(ctx, want)
	roots := rootsOf(owners)
	switch {
	case len(roots) == 1:
		return roots[0].ID, nil
	case len(roots) > 1:
		return procID{}, field.Errorf("target", "%d unrelated processes listen on TCP port %d: %s; set {target.pid} or {target.match}", len(roots), t.port, describeProcs(roots))
	case denied > 0:
		return procID{}, field.Errorf("target", "the owner of TCP port %d is not visible: /proc/PID/fd of %d processes could not be read; run soakd as the target's user or grant it CAP_SYS_PTRACE, or set {target.pid}", t.port, denied)
	}
	return procID{}, field.Errorf("target", "a socket listens on TCP port %d but no process in %s owns it (another network namespace?); set {target.pid}", t.port, t.fs.root)
}

// socketOwners scans every process's fd dir for the wanted socket inodes.
// denied counts fd dirs that could not be read.
func (t *Target) socketOwners(ctx context.Context, want map[uint64]struct{}) (owners []candidate, denied int) {
	var pids []int32
	if err := t.fs.listPIDs(func(pid int32) { pids = append(pids, pid) }); err != nil {
		return nil, 0
	}
	found := map[uint64]struct{}{}
	for _, pid := range pids {
		if ctx.Err() != nil {
			break
		}
		clear(found)
		if _, err := t.fs.fdScan(pid, found); err != nil {
			if isDenied(err) {
				denied++
			}
			continue
		}
		if !sharesAny(found, want) {
			continue
		}
		if c, ok := t.candidateOf(pid); ok {
			owners = append(owners, c)
		}
	}
	return owners, denied
}

func sharesAny(a, b map[uint64]struct{}) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}
