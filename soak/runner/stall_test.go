package runner

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/load"
)

func TestStallWatch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		sec int
		c   load.Counters
	}
	ok := func(n uint64) load.Counters {
		return load.Counters{Completed: n, Answered: n, BytesIn: 100 * n, InFlight: 2}
	}
	hung := func(n, timeouts uint64) load.Counters {
		return load.Counters{Completed: n + timeouts, Answered: n, BytesIn: 100 * n, Timeouts: timeouts, InFlight: 2}
	}
	tests := []struct {
		name         string
		steps        []step
		want         bool
		since, until int
		ongoing      bool
	}{
		{"answering", []step{{0, ok(0)}, {5, ok(50)}, {10, ok(100)}, {20, ok(200)}}, false, 0, 0, false},
		{"slow but under the timeout", []step{{0, ok(0)}, {3, ok(0)}, {6, ok(1)}, {9, ok(1)}}, false, 0, 0, false},
		{"no timeouts: refused, not hung", []step{{0, ok(10)}, {30, load.Counters{Completed: 500, Answered: 10, BytesIn: 1000}}}, false, 0, 0, false},
		{"hung then back", []step{{0, ok(10)}, {2, ok(20)}, {8, hung(20, 2)}, {14, hung(20, 4)}, {16, ok(30)}}, true, 2, 16, false},
		{"hung to the end", []step{{0, ok(10)}, {2, ok(20)}, {8, hung(20, 2)}, {20, hung(20, 6)}}, true, 2, 30, true},
		{"a byte came", []step{{0, ok(10)}, {8, load.Counters{Completed: 12, Answered: 10, BytesIn: 1001, Timeouts: 2}}}, false, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stallWatch{timeout: 5 * time.Second}
			for _, st := range tt.steps {
				s.observe(at(st.sec), st.c)
			}
			s.end(at(30), true)
			switch {
			case !tt.want && s.worst != nil:
				t.Errorf("got stall %+v; want none", s.worst)
			case tt.want && s.worst == nil:
				t.Errorf("got no stall; want one from %d s to %d s", tt.since, tt.until)
			case tt.want && (!s.worst.Since.Equal(at(tt.since)) || !s.worst.Until.Equal(at(tt.until)) || s.worst.Ongoing != tt.ongoing):
				t.Errorf("got stall %+v; want %d s to %d s, ongoing %v", s.worst, tt.since, tt.until, tt.ongoing)
			}
		})
	}
}

// hangAfter serves n requests on 127.0.0.1:0, then reads and never
// answers again.
func hangAfter(t *testing.T, n int64) string {
	t.Helper()
	var served atomic.Int64
	return soaktest.RawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if strings.TrimSpace(line) == "" {
					break
				}
			}
			if served.Add(1) > n {
				_, _ = io.Copy(io.Discard, br)
				return
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	})
}

// A target that stops answering in the middle of the load is a finding
// on the report, worded in its text.
func TestRunNamesAStall(t *testing.T) {
	url := hangAfter(t, 200)
	o := Options{
		Load: load.Options{Endpoints: []load.Endpoint{{URL: url}}, Concurrency: 2, KeepAlive: true,
			Duration: 2500 * time.Millisecond, Timeout: 300 * time.Millisecond},
		NoProbe:  true,
		Interval: 100 * time.Millisecond,
		Log:      zaptest.NewLogger(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", b.String())
	s := rep.Target.Stall
	if s == nil || !s.Ongoing || s.Connections < 1 || !strings.Contains(b.String(), "STOPPED ANSWERING: The target stopped answering at ") {
		t.Errorf("stall = %+v; want an ongoing stall in the report:\n%s", s, b.String())
	}
	var js strings.Builder
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"stall": {`) {
		t.Errorf("JSON report (err %v) lacks the stall:\n%s", err, js.String())
	}
	if rep.Load.Censored == 0 || rep.Load.Censored != rep.Load.ErrorsByCause[load.CauseTimeout] {
		t.Errorf("censored %d, timeouts %d; want the same, > 0", rep.Load.Censored, rep.Load.ErrorsByCause[load.CauseTimeout])
	}
}

// Wait notices come 10 s after the last answer, then 20 s, 40 s … apart.
func TestWaitNotices(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := stallWatch{timeout: time.Minute}
	waiting := load.Counters{Completed: 5, Answered: 5, BytesIn: 500, InFlight: 1}
	s.observe(t0, waiting)
	var at []int
	for sec := 1; sec <= 80; sec++ {
		now := t0.Add(time.Duration(sec) * time.Second)
		s.observe(now, waiting)
		if s.waiting(now, waiting) {
			at = append(at, sec)
		}
	}
	if fmt.Sprint(at) != "[10 20 40 80]" {
		t.Errorf("notices at %v s; want [10 20 40 80]", at)
	}
	if s.waiting(t0.Add(200*time.Second), load.Counters{Completed: 5, Answered: 5, BytesIn: 500}) {
		t.Error("a notice with nothing in flight; want none")
	}
}
