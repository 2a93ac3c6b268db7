package verdict

import (
	"fmt"
	"strings"
)

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
//     rise: the upper end of its slope's 95 % interval adds less than
//     the CPU leak's 25 % over the soak, or, at the soak's throughput,
//     less than the absolute floor (10 % of one core over 24 h;
//     CostDrift.UnderFloor). Not decided with fewer than its windows, or
//     while a rise is inconclusive (the machine's contention explains it
//     or cannot be told from it, it did not keep rising, or it is not
//     clear of the floor) and its upper end is over the floor.
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
	case d.Rising:
		return bound + ", rising", ""
	case d.Windows < costMinWindows:
		return "", fmt.Sprintf("the CPU cost per request has %d windows, a trend needs %d", d.Windows, costMinWindows)
	case d.UnderFloor():
		return bound + ", not rising", ""
	case d.Inconclusive:
		return "", "the CPU cost per request is undecided: " + d.Reason
	case d.Start > 0 && d.CI95[1]*soakSeconds/3600 < costRise*d.Start:
		return bound + ", not rising", ""
	}
	return "", fmt.Sprintf("the CPU cost per request is not yet proven to rise by less than %.0f %% over the soak (its slope's upper end adds %s)%s",
		100*costRise, upperRise(d, soakSeconds), floorText(d))
}

// upperRise is what the upper end of the cost's slope adds over the
// soak, as a share of the cost at its start.
func upperRise(d CostDrift, soakSeconds float64) string {
	if d.Start <= 0 {
		return "an unknown share: no cost at the start"
	}
	return fmt.Sprintf("%+.0f %%", 100*d.CI95[1]*soakSeconds/3600/d.Start)
}

// floorText says how far the cost's rise is from the absolute floor, or
// "" when no floor is in force.
func floorText(d CostDrift) string {
	if d.FloorPerHour <= 0 {
		return ""
	}
	return fmt.Sprintf(", nor to add less than %s of a core over 24 h at this throughput (its upper end adds %s)",
		corePct(costFloorCores), corePct(d.HorizonCores))
}

// NotRising words why the cost per request is decided not to rise, with
// both bars, e.g. "not rising: its rise adds at most 0.02 % of a core
// over 24 h at this throughput (the floor is 10 %)"; "" when it is not
// so decided (see CPUDecided). soakSeconds is the soak the cost was
// fitted over.
func (d CostDrift) NotRising(soakSeconds float64) string {
	if d.Rising || d.Windows < costMinWindows {
		return ""
	}
	rel := !d.Inconclusive && d.Start > 0 && d.CI95[1]*soakSeconds/3600 < costRise*d.Start
	var by []string
	if d.UnderFloor() {
		by = append(by, fmt.Sprintf("its rise adds at most %s of a core over 24 h at this throughput (the floor is %s)",
			corePct(max(d.HorizonCores, 0)), corePct(costFloorCores)))
	}
	if rel {
		by = append(by, fmt.Sprintf("its rise over the soak is at most %s (the bar is %.0f %%)", upperRise(d, soakSeconds), 100*costRise))
	}
	if len(by) == 0 {
		return ""
	}
	return "not rising: " + strings.Join(by, "; ")
}
