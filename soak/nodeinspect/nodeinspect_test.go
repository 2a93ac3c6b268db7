package nodeinspect

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:9229", true},
		{"127.1.2.3:9229", true},
		{"[::1]:9229", true},
		{"localhost:9229", true},
		{"10.0.0.1:9229", false},
		{"0.0.0.0:9229", false},
		{"example.com:9229", false},
		{"127.0.0.1", false},
		{"ws://127.0.0.1:9229", false},
	} {
		if err := CheckAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q) = %v; want ok %v", tc.addr, err, tc.ok)
		}
	}
}

// keeper keeps 8000 Buffers of 1 KiB when it reads a line, between 40 MB
// and 3 MB of garbage, and says "kept"; it exits by itself after 2 minutes.
const keeper = `
const kept = [];
setTimeout(() => process.exit(0), 120000);
require('readline').createInterface({ input: process.stdin }).on('line', () => {
  for (let i = 0; i < 40000; i++) { Buffer.alloc(1024, 1); }
  for (let i = 0; i < 8000; i++) { kept.push(Buffer.alloc(1024, 0xa5)); }
  for (let i = 0; i < 3000; i++) { Buffer.alloc(1024, 2); } // garbage no collection has seen yet
  console.log('kept');
});
console.log('ready');
`

var listening = regexp.MustCompile(`Debugger listening on ws://(127\.0\.0\.1:\d+)/`)

// startNode starts node with its inspector on a free loopback port and
// the keeper script, and returns the inspector's address, the script's
// stdin and its stdout.
func startNode(t *testing.T) (string, io.Writer, *bufio.Reader) {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed (.ci/run installs nodejs): %v", err)
	}
	cmd := exec.Command(bin, "--inspect=127.0.0.1:0", "-e", keeper)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // by its PID
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	a, ok := <-addr
	if !ok {
		t.Fatal("node exited without a \"Debugger listening on ws://127.0.0.1:PORT/\" line")
	}
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("node said %q, %v; want ready", line, err)
	}
	return a, stdin, out
}

// A real Node: a reading after keeping 8000 Buffers of 1 KiB (and making
// 40 MB of garbage) must have grown by their bytes outside the heap and by
// their wrappers inside it, the garbage collected.
func TestLiveHeapOfARealNode(t *testing.T) {
	addr, stdin, stdout := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, addr)
	if err != nil {
		t.Fatalf("Dial(%s): %v", addr, err)
	}
	defer c.Close()
	before, err := c.LiveHeap(ctx)
	if err != nil {
		t.Fatalf("LiveHeap: %v", err)
	}
	if _, err := io.WriteString(stdin, "keep\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := stdout.ReadString('\n'); err != nil || line != "kept\n" {
		t.Fatalf("node said %q, %v; want kept", line, err)
	}
	after, err := c.LiveHeap(ctx)
	if err != nil {
		t.Fatalf("LiveHeap: %v", err)
	}
	t.Logf("before %+v, after %+v", before, after)
	const kept = 8000 * 1024.0
	if d := after.External - before.External; d < kept || d > 1.05*kept {
		t.Errorf("external grew by %.0f B; want the kept %.0f B (+5 %%)", d, kept)
	}
	// Each Buffer's wrapper and its slot in the array: about 190 B on
	// Node 20; 40 MB of garbage must not be counted.
	if d := after.Used - before.Used; d < 8000*50 || d > 8000*400 {
		t.Errorf("the heap grew by %.0f B (%.0f B a Buffer); want 50–400 B a Buffer", d, d/8000)
	}
}

func TestDialRefusesWhatIsNotNode(t *testing.T) {
	chrome := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"Browser": "Chrome/120.0.0.0", "Protocol-Version": "1.3"}`)
	}))
	defer chrome.Close()
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct{ addr, want string }{
		{strings.TrimPrefix(chrome.URL, "http://"), "not node.js"},
		{strings.TrimPrefix(web.URL, "http://"), "not a Node inspector"},
		{closed, "no Node inspector at"},
		{"10.1.2.3:9229", "not a loopback address"},
	} {
		c, err := Dial(ctx, tc.addr)
		if err == nil {
			c.Close()
			t.Errorf("Dial(%s): no error; want %q", tc.addr, tc.want)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Dial(%s): %v; want %q", tc.addr, err, tc.want)
		}
	}
}
