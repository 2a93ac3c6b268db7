package probes

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadListenQueue fills a listener's accept queue that nobody accepts
// and reads its length, limit and established connections.
func TestReadListenQueue(t *testing.T) {
	lc := net.ListenConfig{}
	ln, err := lc.Listen(t.Context(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	const conns = 3
	for range conns {
		c, err := net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	q, err := ReadListenQueue(port)
	if err != nil {
		t.Fatal(err)
	}
	if q.Listeners != 1 || q.Queue != conns || q.Limit < conns || q.Established != conns {
		t.Errorf("ReadListenQueue = %+v; want 1 listener, queue %d, a limit >= it, %d established", q, conns, conns)
	}
}

// TestReadListenCounters parses a fixture netstat and soakd's own.
func TestReadListenCounters(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "300", "net")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPSynRetrans\nTcpExt: 1 17 19 23\n" +
		"IpExt: InNoRoutes\nIpExt: 0\n"
	if err := os.WriteFile(filepath.Join(dir, "netstat"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadListenCounters(root, 300)
	if want := (ListenCounters{17, 19, 23}); err != nil || got != want {
		t.Errorf("ReadListenCounters = %+v, %v; want %+v", got, err, want)
	}
	if d := got.Sub(ListenCounters{10, 20, 3}); d != (ListenCounters{7, 19, 20}) {
		t.Errorf("Sub = %+v; want {7 19 20} (a counter that went back counts from zero)", d)
	}
	if _, err := ReadListenCounters("", 0); err != nil {
		if _, statErr := os.Stat("/proc/self/net/netstat"); statErr == nil {
			t.Errorf("ReadListenCounters(self): %v", err)
		}
	}
	if _, err := ReadListenCounters(root, 301); err == nil {
		t.Error("ReadListenCounters(missing pid) = nil error; want one")
	}
}
