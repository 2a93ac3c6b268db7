package sweep

import (
	"os"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/verdict"
)

// Level is what one rung of the ladder measured, after its warm-up.
type Level struct {
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"` // the measured span, warm-up excluded
	Requests    uint64  `json:"requests"`
	Throughput  float64 `json:"throughput"` // requests per second
	P50         float64 `json:"p50_seconds"`
	P99         float64 `json:"p99_seconds"`
	P999        float64 `json:"p999_seconds"`
	Max         float64 `json:"max_seconds"`
	// SynModes lists the SYN-retransmit latencies (1, 3, 7 s; 1, 2, 3,
	// 4 s with linear timeouts) near which the requests' latencies
	// cluster: a handshake dropped at a full accept queue and retried.
	SynModes      []float64         `json:"syn_retransmit_modes,omitempty"`
	Errors        uint64            `json:"errors"`
	ErrorsByCause map[string]uint64 `json:"errors_by_cause,omitempty"`
	CPUBound      bool              `json:"cpu_bound"`
	CPU           verdict.CPU       `json:"cpu"`
	// The kernel's view, of soakd's network namespace: the TcpExt counters'
	// growth over the level, and sock_diag's most queued connections at the
	// URL's listener against its limit.
	ListenOverflows  uint64 `json:"listen_overflows"`
	ListenDrops      uint64 `json:"listen_drops"`
	SynRetrans       uint64 `json:"syn_retransmits"`
	AcceptQueueMax   int    `json:"accept_queue_max"`
	AcceptQueueLimit int    `json:"accept_queue_limit"`
	// Established is the most established connections to the URL's port
	// (accepted or still queued) at once over the level, and Accepted
	// the most the target had accepted (established less the accept
	// queue).
	Established float64 `json:"established"`
	Accepted    float64 `json:"accepted"`
	// RSS and FDs are the target's highest over the level (a level ramps
	// its connections up at its start); FDLimit its RLIMIT_NOFILE.
	RSS     uint64 `json:"rss_bytes"`
	FDs     int    `json:"fds"`
	FDLimit int    `json:"fd_limit"`
	// Threads is the most threads the target's processes had at once.
	Threads int `json:"threads"`
}

// ErrorRate is the level's share of failed requests.
func (l Level) ErrorRate() float64 {
	if l.Requests == 0 {
		return 0
	}
	return float64(l.Errors) / float64(l.Requests)
}

// band is a latency range [lo, hi) around a SYN-retransmit mode.
type band struct{ mode, lo, hi float64 }

// synBands are the latencies a dropped handshake adds, from the first
// SYN's 1 s timeout: retransmits 1 s apart for the first linear ones
// (net.ipv4.tcp_syn_linear_timeouts, Linux 6.5 and later: 4 by default,
// and the timer keeps 1 s through the retransmit after them: 1 to 5 s),
// then doubling, up to 16 s. Without linear timeouts that is 1, 3, 7 and
// 15 s. A latency from 50 ms before a mode to 500 ms after counts toward
// it.
func synBands(linear int) []band {
	var bs []band
	t, rto := 0.0, 1.0
	for i := 0; t+rto <= 16; i++ {
		t += rto
		bs = append(bs, band{t, t - 0.05, t + 0.5})
		if i >= linear {
			rto *= 2
		}
	}
	return bs
}

// linearSynTimeouts reads net.ipv4.tcp_syn_linear_timeouts; 0 when the
// kernel has none.
func linearSynTimeouts() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_syn_linear_timeouts")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return n
}

// synModes names the bands that hold a cluster: at least 3 latencies,
// and more than twice as many as the same width just below the band (a
// slow server's tail is smooth there; retransmits are not). A share of
// all requests would not do: a fast server answers thousands of requests
// for each one a retransmit delays.
func synModes(bands []band, counts func(lo, hi float64) uint64) []float64 {
	var modes []float64
	for _, b := range bands {
		in := counts(b.lo, b.hi)
		below := counts(b.lo-(b.hi-b.lo), b.lo)
		if in >= 3 && in > 2*below {
			modes = append(modes, b.mode)
		}
	}
	return modes
}
