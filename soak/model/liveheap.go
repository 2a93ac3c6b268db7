package model

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/verdict"
)

// LiveHeapFile is the run directory's file of live-heap readings.
const LiveHeapFile = "liveheap.csv"

// LiveHeap is one reading of the target's live heap, taken by the runtime
// itself: at a boundary of the designed mix's blocks (a Go heap profile
// fetched with gc=1: its inuse_space after a forced collection), or after
// a young collection (a HotSpot JVM's survivors and old generation, from
// its hsperfdata counters; CostSeconds 0). Unlike RSS it carries no
// collector's sawtooth, so its growth over each block can be split
// between the endpoints (docs/attribution.md).
type LiveHeap struct {
	Elapsed     float64 // seconds since the run started, at the reading
	Incarnation int
	Phase       verdict.Phase
	Favoured    int     // the endpoint favoured in the block that ended here; -1 at the load's start
	Bytes       float64 // the live heap
	CostSeconds float64 // how long the reading took (it forces a collection)
	// Requests is each endpoint's cumulative completed requests at the
	// reading: the mean of the counts before and after it.
	Requests []float64
}

// liveHeapColumns are the fixed columns; requests_<n> follow.
var liveHeapColumns = []string{"elapsed_seconds", "incarnation", "phase", "favoured", "live_bytes", "cost_seconds"}

// WriteLiveHeap writes readings as liveheap.csv.
func WriteLiveHeap(w io.Writer, readings []LiveHeap) error {
	k := 0
	for _, h := range readings {
		k = max(k, len(h.Requests))
	}
	cw := csv.NewWriter(w)
	head := append([]string(nil), liveHeapColumns...)
	for j := range k {
		head = append(head, EndpointColumn(j))
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, h := range readings {
		row := []string{f(h.Elapsed), strconv.Itoa(h.Incarnation), PhaseName(h.Phase), strconv.Itoa(h.Favoured), f(h.Bytes), f(h.CostSeconds)}
		for j := range k {
			v := 0.0
			if j < len(h.Requests) {
				v = h.Requests[j]
			}
			row = append(row, f(v))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadLiveHeap reads a liveheap.csv that WriteLiveHeap wrote. An error
// names the line and the column.
func ReadLiveHeap(r io.Reader) ([]LiveHeap, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s line 1: %w (want the header %s,requests_0,…)", LiveHeapFile, err, strings.Join(liveHeapColumns, ","))
	}
	if len(head) < len(liveHeapColumns)+2 || strings.Join(head[:len(liveHeapColumns)], ",") != strings.Join(liveHeapColumns, ",") {
		return nil, fmt.Errorf("%s line 1: header %q; want %s then requests_0, requests_1, …", LiveHeapFile, strings.Join(head, ","), strings.Join(liveHeapColumns, ","))
	}
	k := len(head) - len(liveHeapColumns)
	var out []LiveHeap
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", LiveHeapFile, line, err)
		}
		if len(row) != len(head) {
			return nil, fmt.Errorf("%s line %d: %d fields; want %d, as the header has", LiveHeapFile, line, len(row), len(head))
		}
		num := func(i int) (float64, error) {
			v, err := strconv.ParseFloat(row[i], 64)
			if err != nil {
				return 0, fmt.Errorf("%s line %d, column %s: %q is not a number", LiveHeapFile, line, head[i], row[i])
			}
			return v, nil
		}
		var h LiveHeap
		var vals [6]float64
		for i := range liveHeapColumns {
			if i == 2 {
				continue
			}
			if vals[i], err = num(i); err != nil {
				return nil, err
			}
		}
		if h.Phase, err = parsePhase(row[2]); err != nil {
			return nil, fmt.Errorf("%s line %d, column phase: %w", LiveHeapFile, line, err)
		}
		h.Elapsed, h.Incarnation, h.Favoured, h.Bytes, h.CostSeconds = vals[0], int(vals[1]), int(vals[3]), vals[4], vals[5]
		h.Requests = make([]float64, k)
		for j := range k {
			if h.Requests[j], err = num(len(liveHeapColumns) + j); err != nil {
				return nil, err
			}
		}
		out = append(out, h)
	}
}
