package model

import (
	"fmt"

	"github.com/soakd/soakd/soak/load"
)

// RateShortShare is the share of its requested rate under which an open
// loop's run is said to have fallen short: its verdicts are of a lighter
// load than asked for.
const RateShortShare = 0.9

// RateShortfall is the sentence that says an open loop reached under
// RateShortShare of its requested rate over the load, with its late and
// missed sends, or "" when it reached it, the loop was closed, or there
// was no load.
func RateShortfall(s *load.Summary) string {
	if s == nil || s.Mode != "open" || s.TargetRate <= 0 || s.DurationSeconds <= 0 {
		return ""
	}
	share := s.RPS / s.TargetRate
	if share >= RateShortShare {
		return ""
	}
	return fmt.Sprintf("the open loop reached %.4g of the %.4g req/s requested (%.0f %%, under %.0f %%): %d sends left late and %d never left; the verdicts are of this lighter load",
		s.RPS, s.TargetRate, 100*share, 100*RateShortShare, s.LateSends, s.MissedSends)
}
