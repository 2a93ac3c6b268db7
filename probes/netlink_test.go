package probes

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
)

// diagMsg builds one netlink message of a sock_diag dump.
func diagMsg(typ uint16, state uint8, port uint16, inode uint32) []byte {
	b := make([]byte, nlmsgHdrLen+diagMsgLen)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint16(b[4:], typ)
	m := b[nlmsgHdrLen:]
	m[1] = state
	binary.BigEndian.PutUint16(m[4:], port)
	binary.LittleEndian.PutUint32(m[68:], inode)
	return b
}

func TestParseDiagMessages(t *testing.T) {
	sock := diagMsg(20, tcpListen, 8080, 77)
	done := make([]byte, nlmsgHdrLen)
	binary.LittleEndian.PutUint32(done, nlmsgHdrLen)
	binary.LittleEndian.PutUint16(done[4:], 3) // NLMSG_DONE
	nlErr := make([]byte, nlmsgHdrLen+4)
	binary.LittleEndian.PutUint32(nlErr, uint32(len(nlErr)))
	binary.LittleEndian.PutUint16(nlErr[4:], 2)                              // NLMSG_ERROR
	binary.LittleEndian.PutUint32(nlErr[nlmsgHdrLen:], uint32(0xffffffff-1)) // -2: ENOENT
	tests := []struct {
		name    string
		in      []byte
		want    []tcpEntry
		done    bool
		wantErr string
	}{
		{name: "one socket then done", in: append(append([]byte{}, sock...), done...), want: []tcpEntry{{LocalPort: 8080, State: tcpListen, Inode: 77}}, done: true},
		{name: "more to come", in: sock, want: []tcpEntry{{LocalPort: 8080, State: tcpListen, Inode: 77}}},
		{name: "kernel error", in: nlErr, done: true, wantErr: "sock_diag: no such file or directory"},
		{name: "length past the datagram", in: sock[:40], wantErr: "sock_diag: truncated message"},
		{name: "message too short for inet_diag_msg", in: func() []byte {
			b := append([]byte{}, sock[:nlmsgHdrLen+8]...)
			binary.LittleEndian.PutUint32(b, uint32(len(b)))
			return b
		}(), wantErr: "sock_diag: truncated message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []tcpEntry
			done, err := parseDiagMessages(tt.in, func(e tcpEntry) { got = append(got, e) })
			if errText(err) != tt.wantErr || done != tt.done {
				t.Fatalf("got done %v err %q; want %v %q", done, errText(err), tt.done, tt.wantErr)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

// TestDiagMatchesProcFiles checks the sock_diag census against
// /proc/net/tcp{,6} for a listener of this test.
func TestDiagMatchesProcFiles(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	listening := func(e tcpEntry, found *bool) {
		if e.State == tcpListen && e.LocalPort == port {
			*found = true
		}
	}
	var inDiag, inFile bool
	if err := diagDump(make([]byte, 64<<10), func(e tcpEntry) { listening(e, &inDiag) }); err != nil {
		t.Skipf("no sock_diag here: %v", err)
	}
	parseNetTCP([]byte(mustRead(t, "/proc/net/tcp")), func(e tcpEntry) { listening(e, &inFile) })
	if !inDiag || !inFile {
		t.Errorf("listener on port %d: in sock_diag %v, in /proc/net/tcp %v; want both", port, inDiag, inFile)
	}
}

// parseDiagMessages parses one datagram of a sock_diag dump as the census
// does. done is true at NLMSG_DONE.
func parseDiagMessages(b []byte, fn func(tcpEntry)) (done bool, err error) {
	return parseDiagRaw(b, func(m []byte) { fn(diagEntry(m)) })
}
