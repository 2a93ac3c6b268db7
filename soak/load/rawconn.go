package load

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// rawIOAllowed lets New choose blocking sockets (tests turn it off to run
// the same cases through the runtime's poller).
var rawIOAllowed = true

// useRawIO tells whether the closed-loop workers use blocking sockets:
// only when each worker can keep a P of its own with one left over for
// the sampler and the reporter (Concurrency < GOMAXPROCS). Then a request
// costs one write and one read system call, and the reply wakes the worker
// directly: no EAGAIN read, no epoll_pwait, no futex hand-off between
// threads. With more workers than Ps, goroutines on the runtime's poller
// are cheaper than threads parked in read.
func useRawIO(o *Options) bool {
	return rawIOAllowed && o.Rate == 0 && o.Concurrency < runtime.GOMAXPROCS(0)
}

// rawConn is a blocking TCP socket outside the runtime's poller. Its
// timeouts and interrupts come from the watchdog and the stop, which shut
// it down (shutdown(2) wakes a blocked connect, read or write).
type rawConn struct {
	fd int
	// ends are its addresses once read (see worker.eachConn), guarded by
	// the worker's connM.
	ends connAddrs
}

// dialRaw opens a blocking socket to sa. set publishes the socket to the
// worker before connect, so that a stop or the watchdog can shut it down
// while connect blocks; it returns false when the run has stopped. On an
// error after set the caller closes the published socket.
func dialRaw(sa unix.Sockaddr, family int, noDelay bool, set func(*rawConn) bool) error {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	if !set(&rawConn{fd: fd}) {
		return context.Canceled
	}
	if noDelay {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return os.NewSyscallError("setsockopt", err)
		}
	}
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	return nil
}

// Read reads once; a closed peer gives io.EOF.
func (c *rawConn) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(c.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p.
func (c *rawConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Write(c.fd, p[done:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, os.NewSyscallError("write", err)
		}
		done += n
	}
	return done, nil
}

// shutdown wakes any call blocked on the socket; the owner still closes it.
func (c *rawConn) shutdown() { _ = unix.Shutdown(c.fd, unix.SHUT_RDWR) }

func (c *rawConn) close() { _ = unix.Close(c.fd) }

// sockaddr resolves a host:port once into a socket address.
func sockaddr(addr string) (unix.Sockaddr, int, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return sa, unix.AF_INET, nil
	}
	if ip6 := ta.IP.To16(); ip6 != nil {
		sa := &unix.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ip6)
		if ta.Zone != "" {
			if ifi, err := net.InterfaceByName(ta.Zone); err == nil {
				sa.ZoneId = uint32(ifi.Index)
			}
		}
		return sa, unix.AF_INET6, nil
	}
	return nil, 0, &net.AddrError{Err: "no IP address", Addr: addr}
}

// addrPortOf is sa's address and port (zero for a sockaddr not IP).
func addrPortOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// readEnds fills ends with fd's two addresses, read once it is connected.
func (a *connAddrs) readEnds(fd int) {
	if a.Local.Port() != 0 && a.Remote.Port() != 0 {
		return
	}
	if sa, err := unix.Getpeername(fd); err == nil { // ENOTCONN while it connects
		if a.Remote = addrPortOf(sa); a.Remote.Port() != 0 {
			if sa, err := unix.Getsockname(fd); err == nil {
				a.Local = addrPortOf(sa)
			}
		}
	}
}
