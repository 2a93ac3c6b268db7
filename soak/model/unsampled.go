package model

import (
	"fmt"
	"io"
)

// UnsampledAdvice is what to do about an endpoint whose server is not
// sampled.
const UnsampledAdvice = "sample it with its own run, or use --pid/--match to choose the tree"

// writeUnsampled warns of each endpoint whose server is not sampled.
func (t TargetInfo) writeUnsampled(w io.Writer) {
	for _, u := range t.Unsampled {
		fmt.Fprintf(w, "  WARNING: endpoint %s is not sampled: its requests are in the load, its server's resources in no verdict; %s\n", u, UnsampledAdvice)
	}
}
