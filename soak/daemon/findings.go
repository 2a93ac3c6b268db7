package daemon

import (
	"slices"
	"strings"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// memoryGroup are the memory resources of one process: a leak shows in
// each of them, and is one finding, one alert. The member with the
// strongest evidence of a leak when it first fires gives the alert its
// resource label, fixed until it resolves; the others are an annotation.
// It resolves only when every member measured reads stable or plateau.
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
		if stronger(rep.Resources[n], rep.Resources[lead]) {
			lead = n
		}
	}
	return append([]finding{{lead: lead, members: group}}, out...)
}

// key names f for a run's gate: the memory group is one finding whichever
// member leads it in a look.
func (f finding) key() string {
	if f.members != nil {
		return "memory"
	}
	return f.lead
}

// stronger says whether a is stronger evidence of a leak than b: a leak
// over anything else, then the smaller p-value (a tie keeps b, the
// earlier in memoryGroup's order).
func stronger(a, b verdict.Resource) bool {
	if (a.Verdict == verdict.Leak) != (b.Verdict == verdict.Leak) {
		return a.Verdict == verdict.Leak
	}
	return a.Verdict == verdict.Leak && a.PValue < b.PValue
}

// figures is the resource whose figures f's alert labelled label carries:
// the label's own while it leaks, else the lead's (the strongest evidence
// of the group in rep).
func (f finding) figures(rep *model.Report, label string) string {
	if rep.Resources[label].Verdict == verdict.Leak {
		return label
	}
	return f.lead
}

// gone says whether rep shows f's finding gone: each member measured
// (the lead alone for a single resource) reads stable or plateau. read
// says what each read, e.g. "rss stable, pss inconclusive (…)".
func (f finding) gone(rep *model.Report) (gone bool, read string) {
	members := f.members
	if members == nil {
		members = []string{f.lead}
	}
	gone = true
	var parts []string
	for _, n := range members {
		res, ok := rep.Resources[n]
		if !ok {
			continue
		}
		part := n + " " + res.Verdict
		if !leakStopped(res.Verdict) {
			gone = false
			if res.Verdict != verdict.Leak && res.Reason != "" {
				part += " (" + res.Reason + ")"
			}
		}
		parts = append(parts, part)
	}
	return gone && len(parts) > 0, strings.Join(parts, ", ")
}

// untilStopped says what resolves f's alert.
func (f finding) untilStopped() string {
	if f.members == nil {
		return "stable or plateau"
	}
	return "stable or plateau in every one of " + strings.Join(f.members, ", ")
}

// leakStopped says whether a resource's verdict shows that a leak stopped:
// it is flat (stable) or its growth ended (plateau).
func leakStopped(v string) bool { return verdict.Settled(v) }

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

// also describes the group's members other than fig (whose figures the
// alert carries) as rep reads them, e.g. "pss: leak, 2.8 KiB/request;
// uss: inconclusive".
func (f finding) also(rep *model.Report, fig string) string {
	var parts []string
	for _, n := range f.members {
		res, ok := rep.Resources[n]
		if n == fig || !ok {
			continue
		}
		if res.Verdict != verdict.Leak {
			parts = append(parts, n+": "+res.Verdict)
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
