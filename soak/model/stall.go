package model

import (
	"fmt"
	"io"
	"time"
)

// Stall is the longest time during the load in which the target stopped
// answering: requests timed out while connections were open, and no
// response and no byte arrived for longer than the timeout.
type Stall struct {
	// Since is when the last answer or byte arrived before the stall;
	// Until is when answers came again, or when the load ended
	// (Ongoing).
	Since   time.Time `json:"since"`
	Until   time.Time `json:"until"`
	Ongoing bool      `json:"ongoing,omitempty"` // still stalled when the load ended
	// Connections is the most requests seen waiting at once.
	Connections int `json:"connections"`
	// Reason is the sentence of the finding.
	Reason string `json:"reason"`
}

// NewStall words a stall from since to until.
func NewStall(since, until time.Time, connections int, ongoing bool) *Stall {
	s := &Stall{Since: since, Until: until, Connections: connections, Ongoing: ongoing}
	end := "; it answered again at " + until.Format(time.RFC3339)
	if ongoing {
		end = "; it was still not answering when the load ended"
	}
	conns := fmt.Sprintf("%d connections", connections)
	if connections == 1 {
		conns = "1 connection"
	}
	s.Reason = fmt.Sprintf("The target stopped answering at %s (%s open, 0 bytes received for %s)%s.",
		since.Format(time.RFC3339), conns, FormatDuration(until.Sub(since).Seconds()), end)
	return s
}

// writeStall writes the stall finding line, if any.
func (r *Report) writeStall(w io.Writer) {
	if s := r.Target.Stall; s != nil {
		fmt.Fprintf(w, "STOPPED ANSWERING: %s\n", s.Reason)
	}
}
