// Package sdnotify speaks systemd's notify protocol (sd_notify(3)): READY,
// RELOADING, STOPPING, STATUS and the watchdog, over the datagram socket
// named by NOTIFY_SOCKET. A Notifier without a socket does nothing, so the
// daemon calls it unconditionally.
package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Notifier sends state changes to systemd. The zero value and nil are
// disabled Notifiers.
type Notifier struct {
	socket   string
	watchdog time.Duration
}

// New returns a Notifier sending to the unixgram socket at socketPath (a
// path, or "@name" for an abstract socket); "" disables it.
func New(socketPath string) *Notifier {
	return &Notifier{socket: socketPath}
}

// FromEnv returns the Notifier systemd asks for: NOTIFY_SOCKET, and the
// watchdog timeout from WATCHDOG_USEC when WATCHDOG_PID is unset or this
// process. It is the only function that reads the environment.
func FromEnv() *Notifier {
	n := New(os.Getenv("NOTIFY_SOCKET"))
	n.watchdog = watchdogFromEnv(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"), os.Getpid())
	return n
}

func watchdogFromEnv(usec, pid string, self int) time.Duration {
	if pid != "" && pid != strconv.Itoa(self) {
		return 0
	}
	us, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || us <= 0 {
		return 0
	}
	return time.Duration(us) * time.Microsecond
}

// Enabled reports whether n has a socket to send to.
func (n *Notifier) Enabled() bool { return n != nil && n.socket != "" }

// WatchdogTimeout returns systemd's WatchdogSec for this process, 0 when
// the watchdog is off.
func (n *Notifier) WatchdogTimeout() time.Duration {
	if n == nil {
		return 0
	}
	return n.watchdog
}

// Notify sends state, newline-separated "KEY=VALUE" assignments, in one
// datagram. It is a no-op on a disabled Notifier.
func (n *Notifier) Notify(state string) error {
	if !n.Enabled() {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sdnotify: dial %s: %w", n.socket, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sdnotify: send to %s: %w", n.socket, err)
	}
	return nil
}

// Ready tells systemd start-up (or a reload) finished.
func (n *Notifier) Ready() error { return n.Notify("READY=1") }

// Reloading tells systemd a reload began; send Ready when it is done.
// MONOTONIC_USEC lets Type=notify-reload (systemd 253+) match the two.
func (n *Notifier) Reloading() error {
	return n.Notify("RELOADING=1\nMONOTONIC_USEC=" + strconv.FormatInt(monotonicUsec(), 10))
}

// Stopping tells systemd the daemon is shutting down.
func (n *Notifier) Stopping() error { return n.Notify("STOPPING=1") }

// Status sets the one-line status `systemctl status` shows.
func (n *Notifier) Status(s string) error {
	return n.Notify("STATUS=" + strings.ReplaceAll(s, "\n", " "))
}

// Watchdog pings the watchdog.
func (n *Notifier) Watchdog() error { return n.Notify("WATCHDOG=1") }
