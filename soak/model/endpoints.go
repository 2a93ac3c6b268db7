package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Per-endpoint counts in samples.csv: with two or more endpoints, each
// sample holds every endpoint's cumulative completed requests in one
// requests_<n> column per endpoint (n its index in the targets file),
// after the fixed columns. The endpoints' names live in the report
// (load.endpoints), not in the file.

// endpointPrefix begins the name of a per-endpoint count column.
const endpointPrefix = "requests_"

// EndpointColumn names endpoint i's count column: requests_<i>.
func EndpointColumn(i int) string { return endpointPrefix + strconv.Itoa(i) }

// endpointIndex parses a requests_<n> column name; ok is false for any
// other name.
func endpointIndex(name string) (int, bool) {
	rest, found := strings.CutPrefix(name, endpointPrefix)
	if !found || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n >= maxEndpointColumns {
		return 0, false
	}
	return n, true
}

// maxEndpointColumns bounds the requests_<n> columns a file may have.
const maxEndpointColumns = 1024

// endpointColumns names k count columns, none when k < 2 (one endpoint's
// count is the requests column).
func endpointColumns(k int) []string {
	if k < 2 {
		return nil
	}
	names := make([]string, k)
	for i := range names {
		names[i] = EndpointColumn(i)
	}
	return names
}

// endpointCells formats r's first k counts; a count the record lacks is
// an empty cell.
func endpointCells(r Record, k int) []string {
	if k < 2 {
		return nil
	}
	cells := make([]string, k)
	for i := range cells {
		if i < len(r.EndpointRequests) {
			cells[i] = formatUint(r.EndpointRequests[i])
		}
	}
	return cells
}

// endpointCol is the column that reads endpoint i's count.
func endpointCol(i int) Column {
	return Column{
		Name:   EndpointColumn(i),
		Format: func(r Record) string { return endpointCells(r, max(2, i+1))[i] },
		Parse: func(r *Record, cell string) error {
			if cell == "" {
				return nil
			}
			v, err := parseUint(cell)
			if err != nil {
				return err
			}
			for len(r.EndpointRequests) <= i {
				r.EndpointRequests = append(r.EndpointRequests, 0)
			}
			r.EndpointRequests[i] = v
			return nil
		},
	}
}

// checkEndpointColumns: the requests_<n> columns of a header run from 0
// without a gap, and are two or more when there are any.
func checkEndpointColumns(seen map[int]bool) error {
	if len(seen) == 0 {
		return nil
	}
	for i := range len(seen) {
		if !seen[i] {
			return fmt.Errorf("the per-endpoint columns skip %s: number them requests_0, requests_1, … without a gap", EndpointColumn(i))
		}
	}
	if len(seen) < 2 {
		return fmt.Errorf("one per-endpoint column (requests_0): give one per endpoint, two or more, or none")
	}
	return nil
}

// padEndpoints gives every record one count per requests_<n> column of
// the file, so that a record whose cells were empty still has them all.
func padEndpoints(recs []Record, cols []Column) {
	k := 0
	for _, c := range cols {
		if _, ok := endpointIndex(c.Name); ok {
			k++
		}
	}
	if k == 0 {
		return
	}
	for i := range recs {
		for len(recs[i].EndpointRequests) < k {
			recs[i].EndpointRequests = append(recs[i].EndpointRequests, 0)
		}
	}
}
