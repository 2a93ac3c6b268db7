package model

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// RemoteInfo is the report's account of a remote probe source.
type RemoteInfo struct {
	// Absent says, for each resource the source cannot see, why; such a
	// resource has no verdict.
	Absent map[string]string `json:"absent,omitempty"`
	// Notes are what went wrong or changed while sampling: failed
	// scrapes, restarts, counter resets, series that disappeared, the
	// scrape interval.
	Notes []string `json:"notes,omitempty"`
}

func (ri *RemoteInfo) writeAbsent(w io.Writer) {
	if ri == nil {
		return
	}
	for _, n := range slices.Sorted(maps.Keys(ri.Absent)) {
		fmt.Fprintf(w, "  %s\tabsent\t%s\n", n, ri.Absent[n])
	}
}

func (ri *RemoteInfo) writeNotes(w io.Writer) {
	if ri == nil {
		return
	}
	for _, n := range ri.Notes {
		fmt.Fprintf(w, "Source note:       %s\n", n)
	}
}
