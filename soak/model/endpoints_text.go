package model

import (
	"fmt"
	"io"
	"strings"

	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// EndpointsLine says, in one line, how a resource's growth splits between
// the load's endpoints: "GET /s/scgi/ leaks 101 B/request (CI 96 – 106
// B); GET /static.html: stable". It is "" when the resource was not
// split (one endpoint).
func EndpointsLine(res verdict.Resource) string {
	if why, ok := sharedReason(res.Endpoints); ok {
		return "not split: " + why
	}
	parts := make([]string, 0, len(res.Endpoints))
	for _, e := range res.Endpoints {
		parts = append(parts, EndpointPhrase(e, res.Unit))
	}
	line := strings.Join(parts, "; ")
	if len(res.Endpoints) > 0 && res.Endpoints[0].Source != "" {
		line += " (split on the " + res.Endpoints[0].Source + ": its bytes per request)"
	}
	return line
}

// EndpointPhrase is one endpoint's part of EndpointsLine.
func EndpointPhrase(e verdict.EndpointFit, unit string) string {
	ci := units.Range(e.CI95[0], e.CI95[1], unit)
	switch {
	case e.Verdict == verdict.Leak:
		return fmt.Sprintf("%s leaks %s/request (CI %s)", e.Endpoint, units.Amount(e.PerRequest, unit), ci)
	case e.Verdict == verdict.Stable:
		return e.Endpoint + ": stable"
	case !fitted(e):
		return fmt.Sprintf("%s: inconclusive (%s)", e.Endpoint, e.Reason)
	case e.Reason != "":
		return fmt.Sprintf("%s: inconclusive, %s/request (CI %s): %s", e.Endpoint, units.Amount(e.PerRequest, unit), ci, e.Reason)
	}
	return fmt.Sprintf("%s: inconclusive, %s/request (CI %s)", e.Endpoint, units.Amount(e.PerRequest, unit), ci)
}

// sharedReason is the reason none of the endpoints was fitted, when it
// is the same for all (too few samples).
func sharedReason(eps []verdict.EndpointFit) (string, bool) {
	if len(eps) == 0 || fitted(eps[0]) || eps[0].Reason == "" {
		return "", false
	}
	for _, e := range eps[1:] {
		if fitted(e) || e.Reason != eps[0].Reason {
			return "", false
		}
	}
	return eps[0].Reason, true
}

// fitted: the endpoint's growth was measured (it has an interval).
func fitted(e verdict.EndpointFit) bool { return e.CI95 != [2]float64{} }

// writeEndpoints writes a line per resource split between endpoints
// that says where growth lives: a resource that leaks or that an
// endpoint leaks, and one left inconclusive whose endpoints were fitted
// (not all stable). An endpoint's verdict that only repeats the
// resource's (too few samples, all stable) is left to the JSON.
func (r *Report) writeEndpoints(w io.Writer) {
	for _, n := range r.ResourceNames() {
		res := r.Resources[n]
		if showEndpoints(res) {
			fmt.Fprintf(w, "  %s by endpoint: %s\n", n, EndpointsLine(res))
		}
	}
}

// showEndpoints: the resource's split is worth a line of the text.
func showEndpoints(res verdict.Resource) bool {
	all, stable := true, true
	for _, e := range res.Endpoints {
		if e.Verdict == verdict.Leak {
			return true
		}
		all = all && fitted(e)
		stable = stable && e.Verdict == verdict.Stable
	}
	switch {
	case len(res.Endpoints) == 0:
		return false
	case res.Verdict == verdict.Leak:
		return true
	}
	return res.Verdict == verdict.Inconclusive && all && !stable
}
