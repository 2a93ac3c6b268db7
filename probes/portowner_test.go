package probes

import (
	"reflect"
	"testing"
)

// TestListenInodesOnlyListen reads the fixture's net/tcp and net/tcp6:
// port 8080 (0x1F90) has a LISTEN socket (inode 1001) and connections in
// ESTABLISHED (2001) and CLOSE_WAIT (2002); port 8081 (0x1F91) a LISTEN
// socket (1002) and an ESTABLISHED one (9999). Only the LISTEN sockets
// find the port's owner: a client's connection to the port, or a
// worker's accepted one, does not own it.
func TestListenInodesOnlyListen(t *testing.T) {
	tg := openFixture(t, Spec{PID: 100})
	for _, tt := range []struct {
		port uint16
		want map[uint64]struct{}
	}{
		{8080, map[uint64]struct{}{1001: {}}},
		{8081, map[uint64]struct{}{1002: {}}},
		{9999, map[uint64]struct{}{}},
	} {
		if got := tg.listenInodes(tt.port); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("listenInodes(%d) = %v; want %v", tt.port, got, tt.want)
		}
	}
}
