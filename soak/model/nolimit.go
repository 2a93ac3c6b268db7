package model

import (
	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// NoLimit describes the time to exhaustion of a memory leak that has no
// limit (no cgroup memory.max, no --mem-limit), where it is not "never":
// "no memory limit; at this rate it fills the host's RAM (15.6 GiB) in
// about 5.2 h". hostRAM is the host's RAM in bytes (0: unknown). It is ""
// for a resource that is not leaking memory, or that has a limit.
func NoLimit(res verdict.Resource, hostRAM uint64) string {
	if res.Verdict != verdict.Leak || res.Unit != "bytes" || res.Limit > 0 || res.TimeToExhaustionSeconds != nil {
		return ""
	}
	s := "no memory limit"
	if hostRAM == 0 || res.PerHour <= 0 {
		return s
	}
	left := max(float64(hostRAM)-res.End, 0)
	return s + "; at this rate it fills the host's RAM (" + units.Amount(float64(hostRAM), "bytes") + ") in about " +
		FormatDuration(left/res.PerHour*3600)
}
