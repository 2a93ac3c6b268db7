package verdict

import "fmt"

// ConfirmLooks is how many looks in a row an until-decided run's parts
// must read the same decided verdicts before the run stops (the last
// look, the run's end, stands alone). A look at a short stretch of
// slowly wandering noise reads the wander's own trend with an interval
// too narrow, whatever its level, and the next looks, on more of the
// same series, mostly disagree (docs/verdict-study.md, "Until decided").
const ConfirmLooks = 3

// MinDecideSeconds is the soak before which no look of an until-decided
// run decides (the run's end, when it comes first, still does): the
// looks before it are not taken, and their shares are not spent. Over a
// few minutes, wander that lasts minutes reads as a trend or as flat
// with an interval that cannot know better, at any level; with three
// looks in a row from 5 minutes, leaks 1.5× the floor read stable as
// often as a single analysis of the whole soak reads them
// (docs/verdict-study.md, "Until decided").
const MinDecideSeconds = 300

// Confirm follows the decided verdicts of an until-decided run's parts
// over its looks. Not safe for concurrent use.
type Confirm struct {
	Need  int
	last  map[string]string
	times int
}

// Look records one look's parts (each part's verdict, "" for one not
// decided) and says whether every part has read the same decided
// verdict at Need looks in a row (ConfirmLooks when Need ≤ 0).
func (c *Confirm) Look(parts map[string]string) bool {
	need := c.Need
	if need <= 0 {
		need = ConfirmLooks
	}
	same := len(parts) > 0 && len(parts) == len(c.last)
	for k, v := range parts {
		if v == "" {
			c.last, c.times = nil, 0
			return false
		}
		if c.last[k] != v {
			same = false
		}
	}
	if !same {
		c.last, c.times = parts, 0
	}
	c.times++
	return c.times >= need
}

// CPUDecided says whether the CPU verdict is decided, as an answer for
// an until-decided run's looks, and, when not, what is missing. It has
// two parts:
//   - why the target is as fast as it is: cpu, io or client; or a share
//     of each request on a CPU measured between the bars ("between
//     waiting and CPU-bound" is itself an answer). Not decided when the
//     figures are missing (no CPU time, no responses, no soak window),
//     nor while other work starves the target of CPU (EvidenceStarved).
//   - the CPU cost per request: rising (a CPU leak), or proven not to
//     rise by the CPU leak's 25 % over the soak: the upper end of its
//     slope's 95 % interval adds less than that. Not decided with fewer
//     than its windows, or while the machine's contention explains a rise
//     or cannot be told from it (CostDrift.Inconclusive).
//
// soakSeconds is the soak the cost was fitted over. The answer names
// both parts, e.g. "io, not rising".
func CPUDecided(c CPU, soakSeconds float64) (answer, missing string) {
	var bound string
	switch {
	case c.Bound != BoundInconclusive && c.Bound != "":
		bound = c.Bound
	case c.Evidence == EvidenceRequestShare || c.Evidence == EvidenceBusyFraction:
		bound = "between"
	case c.Evidence == EvidenceStarved:
		return "", "the target was starved of CPU by other work (" + c.Reason + ")"
	default:
		return "", "the CPU figures are missing (" + c.Reason + ")"
	}
	d := c.Cost
	switch {
	case d.Inconclusive:
		return "", "the CPU cost per request rose with the machine's contention: " + d.Reason
	case d.Rising:
		return bound + ", rising", ""
	case d.Windows < costMinWindows:
		return "", fmt.Sprintf("the CPU cost per request has %d windows, a trend needs %d", d.Windows, costMinWindows)
	case d.Start > 0 && d.CI95[1]*soakSeconds/3600 < costRise*d.Start:
		return bound + ", not rising", ""
	}
	return "", fmt.Sprintf("the CPU cost per request is not yet proven to rise by less than %.0f %% over the soak (its slope's upper end adds %.0f %%)",
		100*costRise, 100*d.CI95[1]*soakSeconds/3600/d.Start)
}
