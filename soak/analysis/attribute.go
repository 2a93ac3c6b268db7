package analysis

import (
	"slices"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/urlx"
	"github.com/soakd/soakd/soak/verdict"
)

// attribute splits a resource's growth between the load's endpoints, when
// the records count two or more (see verdict.AttributeEndpoints). It
// takes the same records as points does.
func attribute(recs []model.Record, value func(model.Record) (float64, bool), names []string, opt verdict.ResourceOptions) []verdict.EndpointFit {
	k := endpointCount(recs)
	if k < 2 {
		return nil
	}
	names = endpointNames(names, k)
	var pts []verdict.Point
	var counts [][]float64
	for _, r := range recs {
		v, ok := value(r)
		if !ok || !r.Alive {
			continue
		}
		c := make([]float64, k)
		for j := range min(k, len(r.EndpointRequests)) {
			c[j] = float64(r.EndpointRequests[j])
		}
		pts = append(pts, verdict.Point{Requests: float64(r.Requests), Seconds: r.Elapsed, Value: v, Incarnation: r.Incarnation, Phase: r.Phase})
		counts = append(counts, c)
	}
	return verdict.AttributeEndpoints(pts, counts, names, opt)
}

// attributeLive splits a memory resource's growth between the endpoints
// on the live-heap readings (verdict.AttributeLiveHeap): bytes of live
// heap per request, judged on the resource's floors.
func attributeLive(hs []model.LiveHeap, names []string, opt verdict.ResourceOptions) []verdict.EndpointFit {
	k := 0
	for _, h := range hs {
		k = max(k, len(h.Requests))
	}
	if k < 2 {
		return nil
	}
	names = endpointNames(names, k)
	pts := make([]verdict.Point, 0, len(hs))
	counts := make([][]float64, 0, len(hs))
	for _, h := range hs {
		c := make([]float64, k)
		copy(c, h.Requests)
		total := 0.0
		for _, v := range c {
			total += v
		}
		pts = append(pts, verdict.Point{Requests: total, Seconds: h.Elapsed, Value: h.Bytes, Incarnation: h.Incarnation, Phase: h.Phase})
		counts = append(counts, c)
	}
	opt.Collected, opt.Quantum, opt.Unit = "", 1, "bytes"
	return verdict.AttributeLiveHeap(pts, counts, names, opt)
}

// endpointCount is the number of endpoints the records count apart: the
// most counts any record holds, 0 when none holds two.
func endpointCount(recs []model.Record) int {
	k := 0
	for _, r := range recs {
		k = max(k, len(r.EndpointRequests))
	}
	if k < 2 {
		return 0
	}
	return k
}

// endpointNames gives k names: the ones known, then the samples.csv
// column of each endpoint left (requests_<n>).
func endpointNames(known []string, k int) []string {
	names := make([]string, k)
	for i := range names {
		if i < len(known) && known[i] != "" {
			names[i] = known[i]
		} else {
			names[i] = model.EndpointColumn(i)
		}
	}
	return names
}

// EndpointNames names the load's endpoints as the report shows them:
// "GET /s/scgi/", the method and the request's path and query; the whole
// (redacted) URL when two endpoints would otherwise read the same.
func EndpointNames(eps []load.EndpointCount) []string {
	short := make([]string, len(eps))
	long := make([]string, len(eps))
	for i, ep := range eps {
		long[i] = ep.Method + " " + ep.URL
		short[i] = long[i]
		if uri, ok := urlx.RequestURI(ep.URL); ok {
			short[i] = ep.Method + " " + uri
		}
	}
	for i, n := range short {
		if slices.Index(short, n) != i {
			return long
		}
	}
	return short
}

// OptionsEndpointNames names the endpoints of a load's options as
// EndpointNames does, for an analysis without the load's summary (the
// daemon's live one); nil with one endpoint.
func OptionsEndpointNames(eps []load.Endpoint) []string {
	if len(eps) < 2 {
		return nil
	}
	counts := make([]load.EndpointCount, len(eps))
	for i, ep := range eps {
		m := ep.Method
		if m == "" {
			m = "GET"
		}
		counts[i] = load.EndpointCount{Method: m, URL: urlx.Redact(ep.URL)}
	}
	return EndpointNames(counts)
}
