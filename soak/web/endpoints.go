package web

import (
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// endpointRow is one row of the run page's "By endpoint" table: one
// endpoint's part in one resource's growth.
type endpointRow struct {
	Resource string
	Unit     string
	Fitted   bool // the growth was measured (it has an interval)
	verdict.EndpointFit
}

// endpointRows lists, resource by resource in the report's order, each
// endpoint's part in the growth; none when the run had one endpoint.
func endpointRows(rep *model.Report) []endpointRow {
	var rows []endpointRow
	for _, n := range rep.ResourceNames() {
		res := rep.Resources[n]
		for _, e := range res.Endpoints {
			rows = append(rows, endpointRow{Resource: n, Unit: res.Unit, Fitted: e.CI95 != [2]float64{}, EndpointFit: e})
		}
	}
	return rows
}
