package sdnotify

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen opens a unixgram socket standing in for systemd's.
func listen(t *testing.T) (string, *net.UnixConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return path, conn
}

func recv(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(buf[:n])
}

func TestNotifyOrder(t *testing.T) {
	path, conn := listen(t)
	n := New(path)
	steps := []struct {
		send func() error
		want string
	}{
		{n.Ready, "READY=1"},
		{func() error { return n.Status("soaking web:\n42 req/s") }, "STATUS=soaking web: 42 req/s"},
		{n.Watchdog, "WATCHDOG=1"},
		{n.Reloading, "RELOADING=1\nMONOTONIC_USEC="},
		{n.Stopping, "STOPPING=1"},
	}
	for _, s := range steps {
		if err := s.send(); err != nil {
			t.Fatalf("send %q: %v", s.want, err)
		}
	}
	for _, s := range steps {
		if got := recv(t, conn); !strings.HasPrefix(got, s.want) {
			t.Errorf("got %q; want %q", got, s.want)
		}
	}
}

func TestDisabledIsNoop(t *testing.T) {
	for _, n := range []*Notifier{nil, New(""), {}} {
		if n.Enabled() {
			t.Errorf("Enabled: got true; want false")
		}
		if err := n.Ready(); err != nil {
			t.Errorf("Ready on disabled: %v", err)
		}
	}
}

func TestNotifyMissingSocket(t *testing.T) {
	err := New(filepath.Join(t.TempDir(), "absent.sock")).Ready()
	if err == nil || !strings.Contains(err.Error(), "sdnotify: dial") {
		t.Errorf("got %v; want a dial error", err)
	}
}

func TestWatchdogFromEnv(t *testing.T) {
	cases := []struct {
		name, usec, pid string
		want            time.Duration
	}{
		{"set", "60000000", "", time.Minute},
		{"for us", "2000000", "100", 2 * time.Second},
		{"for another pid", "2000000", "101", 0},
		{"unset", "", "", 0},
		{"garbage", "x", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := watchdogFromEnv(c.usec, c.pid, 100); got != c.want {
				t.Errorf("got %v; want %v", got, c.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	path, conn := listen(t)
	t.Setenv("NOTIFY_SOCKET", path)
	t.Setenv("WATCHDOG_USEC", "30000000")
	t.Setenv("WATCHDOG_PID", "")
	n := FromEnv()
	if got := n.WatchdogTimeout(); got != 30*time.Second {
		t.Errorf("WatchdogTimeout: got %v; want 30s", got)
	}
	if err := n.Ready(); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, conn); got != "READY=1" {
		t.Errorf("got %q; want READY=1", got)
	}
}
