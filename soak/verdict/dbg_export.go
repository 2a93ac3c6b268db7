package verdict

import (
	"fmt"
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// Debug hook for the study: fit details of a series.
func DebugFit(pts []Point) string {
	by, _ := splitSoak(pts)
	s := driving(by)
	f := fitSeries(s, trend.ByMin, 4096)
	binSec := s.seconds() / float64(len(f.b.X))
	return fmt.Sprintf("bins %d binSec %.1f rho %.2f vif %.1f trueφ(10min) %.2f shape %d", len(f.b.X), binSec, f.rho, f.vif, math.Exp(-binSec/600), f.shape.kind)
}
