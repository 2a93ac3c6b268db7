package runner

import (
	"context"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/urlx"
)

// unsampled names each host:port of the load that the sampled tree does
// not serve (probes.Target.Cover), e.g. "127.0.0.1:8081 (pid 1234
// (nginx), not in the sampled tree)", and warns of each: its requests
// are in the load, but its server's resources are in no verdict.
func unsampled(ctx context.Context, tgt *probes.Target, eps []load.Endpoint, log *zap.Logger) []string {
	var out []string
	seen := map[string]bool{}
	for _, ep := range eps {
		a, err := urlx.ParseAddr(ep.URL)
		if err != nil || seen[a.String()] {
			continue // preflight names a bad URL
		}
		seen[a.String()] = true
		c := tgt.Cover(ctx, ep.URL)
		if c.Covered {
			continue
		}
		out = append(out, c.String())
		log.Warn("an endpoint's server is not sampled: its requests are in the load, its resources in no verdict; sample it with its own run, or use --pid/--match to choose the tree",
			zap.String("endpoint", c.Addr), zap.String("why", c.Why))
	}
	return out
}
