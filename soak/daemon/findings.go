package daemon

import (
	"slices"
	"strings"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// memoryGroup are the memory resources of one process: a leak shows in
// each of them, and is one finding, one alert. The first that leaks leads
// the alert (its resource label and figures); the others are an
// annotation.
var memoryGroup = []string{"rss", "pss", "uss"}

// finding is one alert's worth of a report: a resource, or the memory
// group led by one of its members.
type finding struct {
	lead    string   // the resource whose verdict and figures the alert carries
	members []string // the group's resources in the report; nil for a single resource
}

// findings splits rep's resources into findings, in report order.
func findings(rep *model.Report) []finding {
	var out []finding
	var group []string
	for _, n := range rep.ResourceNames() {
		if slices.Contains(memoryGroup, n) {
			group = append(group, n)
			continue
		}
		out = append(out, finding{lead: n})
	}
	if len(group) == 0 {
		return out
	}
	lead := group[0]
	for _, n := range group {
		if rep.Resources[n].Verdict == verdict.Leak {
			lead = n
			break
		}
	}
	return append([]finding{{lead: lead, members: group}}, out...)
}

// label is the resource label of f's alerts: the group's label while one
// of its alerts fires (so that a leak shown first in rss and then only in
// pss stays one alert), else the lead's.
func (f finding) label(active map[alerts.Fingerprint]alerts.Alert) string {
	for fp := range active {
		if (fp.Alertname == alerts.AlertLeak || fp.Alertname == alerts.AlertExhaustion) && slices.Contains(f.members, fp.Resource) {
			return fp.Resource
		}
	}
	return f.lead
}

// also describes the group's other members that leak too, e.g.
// "pss: leak, 2.8 KiB/request; uss: leak, 2.7 KiB/request".
func (f finding) also(rep *model.Report) string {
	var parts []string
	for _, n := range f.members {
		res := rep.Resources[n]
		if n == f.lead || res.Verdict != verdict.Leak {
			continue
		}
		parts = append(parts, n+": leak, "+alerts.FormatAmount(res.PerRequest, res.Unit)+"/request")
	}
	return strings.Join(parts, "; ")
}

// measuredInGroup says whether resource is a memory group member whose
// group rep measured: its finding was judged under another member.
func measuredInGroup(rep *model.Report, resource string) bool {
	if !slices.Contains(memoryGroup, resource) {
		return false
	}
	return slices.ContainsFunc(memoryGroup, func(n string) bool { _, ok := rep.Resources[n]; return ok })
}
