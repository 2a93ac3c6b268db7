package sweep

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// PerConnection is the target's memory and fds per open connection: the
// Theil–Sen slope (robust to a level that stands out) of the levels' RSS
// and fds against the connections they accepted, with Sen's 95 %
// interval, and the connections at which the fds reach their limit.
type PerConnection struct {
	RSSBytes float64    `json:"rss_bytes"`
	RSSCI95  [2]float64 `json:"rss_bytes_ci95"`
	FDs      float64    `json:"fds"`
	FDsCI95  [2]float64 `json:"fds_ci95"`
	// FDLimit is the limit the ceiling is projected to: the target's
	// RLIMIT_NOFILE, or 1024 when its fds stopped at select()'s
	// FD_SETSIZE. CeilingConnections is where the fitted fds reach it; 0
	// when they do not grow.
	FDLimit            int     `json:"fd_limit"`
	CeilingConnections float64 `json:"ceiling_connections"`
	Levels             int     `json:"levels"` // levels fitted
	Text               string  `json:"text"`
}

// perConnection fits RSS and fds against the accepted connections of
// the levels below any fd wall (a level at the wall holds fewer fds than
// connections and would bend the line).
func perConnection(ls []Level) PerConnection {
	var x, rss, fds []float64
	pc := PerConnection{}
	for _, l := range ls {
		if lim, _, ok := fdCeiling(l); ok {
			pc.FDLimit = lim
			continue
		}
		if l.Accepted <= 0 || l.FDs == 0 {
			continue
		}
		x = append(x, l.Accepted)
		rss = append(rss, float64(l.RSS))
		fds = append(fds, float64(l.FDs))
		if pc.FDLimit == 0 {
			pc.FDLimit = l.FDLimit
		}
	}
	pc.Levels = len(x)
	if distinct(x) < 3 {
		pc.Text = fmt.Sprintf("too few levels with distinct connection counts (%d) to fit memory and fds per connection", distinct(x))
		return pc
	}
	r, f := trend.TheilSen(x, rss), trend.TheilSen(x, fds)
	pc.RSSBytes, pc.RSSCI95 = r.Slope, [2]float64{r.Lo, r.Hi}
	pc.FDs, pc.FDsCI95 = f.Slope, [2]float64{f.Lo, f.Hi}
	if pc.FDs > 0.01 && pc.FDLimit > 0 {
		pc.CeilingConnections = (float64(pc.FDLimit) - f.Intercept) / pc.FDs
	}
	pc.Text = pc.sentence()
	return pc
}

func (pc PerConnection) sentence() string {
	s := fmt.Sprintf("≈ %s (95 %% CI %s to %s) and %.2g fds (%.2g to %.2g) per connection",
		bytesText(pc.RSSBytes), bytesText(pc.RSSCI95[0]), bytesText(pc.RSSCI95[1]), pc.FDs, pc.FDsCI95[0], pc.FDsCI95[1])
	if pc.CeilingConnections > 0 {
		s += fmt.Sprintf("; the fd limit (%d) is reached at about %.0f connections", pc.FDLimit, pc.CeilingConnections)
	}
	return s
}

func distinct(x []float64) int {
	seen := map[float64]bool{}
	for _, v := range x {
		if !math.IsNaN(v) {
			seen[v] = true
		}
	}
	return len(seen)
}
