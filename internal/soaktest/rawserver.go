package soaktest

import (
	"net"
	"sync"
	"testing"
)

// RawServer accepts TCP connections on 127.0.0.1:0 and hands each to serve
// in its own goroutine, for servers that answer (or fail to) byte by byte:
// a hang, a half answer, a close. At cleanup the listener and every
// connection are closed and every goroutine waited for. It returns the
// server's http:// URL, ending in "/".
func RawServer(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // guards open
	var open []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Go(func() { defer c.Close(); serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/"
}
