package probes

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// diagMessage is one netlink message of type typ carrying an
// inet_diag_msg with state, local port and inode.
func diagMessage(typ uint16, state uint8, port uint16, inode uint32) []byte {
	m := make([]byte, nlmsgHdrLen+diagMsgLen)
	binary.LittleEndian.PutUint32(m, uint32(len(m)))
	binary.LittleEndian.PutUint16(m[4:], typ)
	m[nlmsgHdrLen+1] = state
	binary.BigEndian.PutUint16(m[nlmsgHdrLen+4:], port)
	binary.LittleEndian.PutUint32(m[nlmsgHdrLen+68:], inode)
	return m
}

// FuzzParseDiagMessages: any sock_diag datagram parses or fails without a
// panic, and yields no more sockets than it has room for; the same bytes
// read as getdents64 records (the fd and /proc listings) yield no more
// names than they have room for, and never "." or "..".
func FuzzParseDiagMessages(f *testing.F) {
	done := make([]byte, nlmsgHdrLen+4)
	binary.LittleEndian.PutUint32(done, uint32(len(done)))
	binary.LittleEndian.PutUint16(done[4:], unix.NLMSG_DONE)
	f.Add(append(diagMessage(20, tcpListen, 8080, 12345), done...))
	f.Add(append(diagMessage(20, tcpEstablished, 80, 1), diagMessage(20, tcpCloseWait, 80, 2)...))
	errMsg := make([]byte, nlmsgHdrLen+4)
	binary.LittleEndian.PutUint32(errMsg, uint32(len(errMsg)))
	binary.LittleEndian.PutUint16(errMsg[4:], unix.NLMSG_ERROR)
	binary.LittleEndian.PutUint32(errMsg[nlmsgHdrLen:], uint32(0xffffffff-12)) // -ENOMEM
	f.Add(errMsg)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		_, _ = parseDiagMessages(b, func(tcpEntry) { n++ })
		if n > len(b)/(nlmsgHdrLen+diagMsgLen) {
			t.Fatalf("%d sockets from %d bytes", n, len(b))
		}
		names := 0
		parseDirents(b, func(name []byte) {
			names++
			if len(name) > len(b) || string(name) == "." || string(name) == ".." {
				t.Fatalf("dirent name %q from %d bytes", name, len(b))
			}
		})
		if names > len(b)/19 {
			t.Fatalf("%d dirents from %d bytes", names, len(b))
		}
	})
}

// FuzzParseDiagExact: any datagram of replies to lookups parses or fails
// without a panic, counts no more replies than it has room for, and hands
// on only whole struct inet_diag_msg.
func FuzzParseDiagExact(f *testing.F) {
	f.Add(diagMessage(unix.SOCK_DIAG_BY_FAMILY, tcpEstablished, 8080, 12345))
	enoent := make([]byte, nlmsgHdrLen+4)
	binary.LittleEndian.PutUint32(enoent, uint32(len(enoent)))
	binary.LittleEndian.PutUint16(enoent[4:], unix.NLMSG_ERROR)
	binary.LittleEndian.PutUint32(enoent[nlmsgHdrLen:], uint32(0xffffffff-1)) // -ENOENT
	f.Add(append(enoent, diagMessage(unix.SOCK_DIAG_BY_FAMILY, tcpCloseWait, 80, 2)...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		found := 0
		n, _ := parseDiagExact(b, func(_ uint32, msg []byte) {
			found++
			if len(msg) < diagMsgLen {
				t.Fatalf("a message of %d bytes; want at least %d", len(msg), diagMsgLen)
			}
		})
		if n > len(b)/nlmsgHdrLen || found > n {
			t.Fatalf("%d replies, %d sockets from %d bytes", n, found, len(b))
		}
	})
}
