package model

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The stored form of RSSValid and ThreadsValid (probes.Sample) is older
// and inverted: samples.csv's no_rss and no_threads columns, and the
// same keys of a record's JSON, are set only on a live record without
// the reading, so files written before the flags were turned round read
// the same, and are written the same.

// unreadJSON is the stored, inverted form of the flags in a record's JSON.
type unreadJSON struct {
	NoRSS     bool `json:"no_rss,omitempty"`
	NoThreads bool `json:"no_threads,omitempty"`
}

// MarshalJSON writes the record with RSSValid and ThreadsValid in their
// stored form, no_rss and no_threads.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	return json.Marshal(struct {
		plain
		unreadJSON
	}{plain(r), unreadJSON{NoRSS: r.Alive && !r.RSSValid, NoThreads: r.Alive && !r.ThreadsValid}})
}

// UnmarshalJSON reads a record written by MarshalJSON, or by a soakd that
// had no other form: a live record holds RSS and Threads unless no_rss
// or no_threads says it does not.
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record
	var w struct {
		plain
		unreadJSON
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Record(w.plain)
	r.RSSValid, r.ThreadsValid = r.Alive && !w.NoRSS, r.Alive && !w.NoThreads
	return nil
}

// unreadCol is a samples.csv column in the stored form of a validity
// flag: "true" on a live row without the reading, empty otherwise. The
// reader starts each row valid (ReadSamples), so an old file without the
// column reads as holding the reading.
func unreadCol(name string, valid func(*Record) *bool) Column {
	return Column{Name: name,
		Format: func(r Record) string {
			if r.Alive && !*valid(&r) {
				return "true"
			}
			return ""
		},
		Parse: func(r *Record, s string) error {
			if s == "" {
				return nil
			}
			unread, err := strconv.ParseBool(s)
			if err != nil {
				return fmt.Errorf("%q: want true, false or nothing", s)
			}
			*valid(r) = !unread
			return nil
		}}
}

func rssValid(r *Record) *bool     { return &r.RSSValid }
func threadsValid(r *Record) *bool { return &r.ThreadsValid }
