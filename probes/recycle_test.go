package probes

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"go.uber.org/zap/zaptest"
)

// A leak hidden by recycling: the tree's processes grow and are replaced,
// under the same root. The members of the samples must show each process
// by its own identity, the replacements, and each one's growth.
func TestLiveRecycledMembers(t *testing.T) {
	const leak = 64 << 10 // bytes per request
	tests := []struct {
		name    string
		args    []string
		workers int
		// minLives is the fewest worker identities the run must show;
		// fdEvery the requests per leaked fd (0: none).
		minLives int
		fdEvery  int
		minDur   time.Duration
	}{
		{name: "prefork replaces each worker after 100 requests", workers: 3, minLives: 6, fdEvery: 10,
			args: []string{"--workers", "3", "--max-requests", "100", "--leak-fd-every", "10"}},
		{name: "supervisor restarts its child every second", workers: 1, minLives: 3, minDur: 3500 * time.Millisecond,
			args: []string{"--workers", "1", "--restart-every", "1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, root := startRecycle(t, append(tt.args, "--leak-bytes", fmt.Sprint(leak))...)
			s := NewSampler(openLive(t, Spec{PID: root}), SamplerOptions{SmapsInterval: -1, SocketInterval: -1, Log: zaptest.NewLogger(t)})
			waitFor(t, fmt.Sprintf("%d workers", tt.workers), func() bool { return s.Sample().Procs == tt.workers+1 })
			samples, served := sampleUnderLoad(t, s, addr, tt.minDur)
			lives := livesOf(t, samples, int32(root))
			t.Logf("%d requests served, %d samples, %d worker lives", served, len(samples), len(lives))
			if len(lives) < tt.minLives {
				t.Fatalf("%d worker identities {pid, start} in the members; want at least %d (replacements)", len(lives), tt.minLives)
			}
			checkGrowth(t, lives, len(samples), tt.fdEvery)
			var sum int64
			for _, l := range lives {
				sum += int64(l.members[len(l.members)-1].RSS) - int64(l.members[0].RSS)
			}
			t.Logf("the tree's RSS went from %.1f to %.1f MiB while its workers grew by %.1f MiB over their lives (%d requests × %d KiB = %.1f MiB)",
				mib(samples[0].RSS), mib(samples[len(samples)-1].RSS), float64(sum)/(1<<20), served, leak>>10, float64(served*leak)/(1<<20))
		})
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// startRecycle runs testdata/recycle with args (soaktest.StartServer)
// and returns HOST:PORT and the master's PID.
func startRecycle(t *testing.T, args ...string) (string, int) {
	t.Helper()
	srv := soaktest.StartServer(t, soaktest.Binary(t, soaktest.Recycle), append([]string{"--max-lifetime", "5m"}, args...)...)
	return srv.Addr, srv.PID
}

// sampleUnderLoad loads addr on loopback at about 200 requests/s, a new
// connection each, while sampling every 100 ms. It stops once 800
// requests were served and minDur has passed, and in any case after 3000
// requests or 20 s.
func sampleUnderLoad(t *testing.T, s *Sampler, addr string, minDur time.Duration) ([]Sample, int) {
	t.Helper()
	const (
		minReq, maxReq = 800, 3000
		maxDur         = 20 * time.Second
	)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	start := time.Now()
	served, failed := 0, 0
	var samples []Sample
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for i := 0; served < maxReq && time.Since(start) < maxDur; i++ {
		if served >= minReq && time.Since(start) >= minDur {
			break
		}
		<-tick.C
		if i%20 == 0 {
			samples = append(samples, s.Sample())
		}
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			failed++
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			served++
		} else {
			failed++
		}
	}
	samples = append(samples, s.Sample())
	if failed > served/10 {
		t.Fatalf("%d requests failed, %d served; want at most a tenth failed", failed, served)
	}
	return samples, served
}

// life is one process's members over the samples it was seen in.
type life struct {
	first, last int // sample indexes
	members     []Member
}

// livesOf groups the samples' members other than the root by {PID,
// start}, checking that the root stayed the same process throughout.
func livesOf(t *testing.T, samples []Sample, root int32) []*life {
	t.Helper()
	type identity struct {
		pid   int32
		start uint64
	}
	byID := map[identity]*life{}
	var out []*life
	for i, sm := range samples {
		if !sm.Alive || sm.RootPID != root || sm.Incarnation != 1 {
			t.Fatalf("sample %d: alive %v, root %d, incarnation %d; want the same root %d throughout", i, sm.Alive, sm.RootPID, sm.Incarnation, root)
		}
		if len(sm.Members) != sm.Procs {
			t.Fatalf("sample %d: %d members of %d processes; want them all", i, len(sm.Members), sm.Procs)
		}
		for _, m := range sm.Members {
			if m.PID == root {
				continue
			}
			id := identity{m.PID, m.Start}
			l := byID[id]
			if l == nil {
				l = &life{first: i}
				byID[id] = l
				out = append(out, l)
			}
			l.last = i
			l.members = append(l.members, m)
		}
	}
	return out
}

// checkGrowth wants at least two lives seen from start to end (not in the
// first or last sample) to grow by at least 1 MiB of RSS each, and, when
// fds leak every fdEvery requests, by at least 3 fds.
func checkGrowth(t *testing.T, lives []*life, samples, fdEvery int) {
	t.Helper()
	grew, whole := 0, 0
	for _, l := range lives {
		if l.first == 0 || l.last == samples-1 || len(l.members) < 3 {
			continue
		}
		whole++
		a, b := l.members[0], l.members[len(l.members)-1]
		if b.NoFDs && !a.NoFDs && len(l.members) > 3 {
			// Read as it exited: its fd table was gone, and its RSS 0 (a
			// zombie) or partly freed (a busy-machine run read a worker
			// 8 MiB under its first reading, fds unreadable).
			b = l.members[len(l.members)-2]
		}
		if a.NoFDs || b.NoFDs {
			t.Errorf("pid %d: fds unreadable; want them read", a.PID)
		}
		rss, fds := int64(b.RSS)-int64(a.RSS), int64(b.FDs)-int64(a.FDs)
		t.Logf("pid %d start %d: %d samples, rss %+.1f MiB, fds %+d", a.PID, a.Start, len(l.members), float64(rss)/(1<<20), fds)
		if rss >= 1<<20 && (fdEvery == 0 || fds >= 3) {
			grew++
		}
	}
	if grew < 2 {
		t.Errorf("%d of %d whole lives grew by ≥ 1 MiB (and ≥ 3 fds when they leak fds); want at least 2", grew, whole)
	}
}
