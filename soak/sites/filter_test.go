package sites

import (
	"math"
	"testing"

	"github.com/google/pprof/profile"
)

// TestTopSharesOfWhatGrew: a site's share is of the growth, the sites
// that grew: a large site that shrank takes nothing away from it (a
// share over 100 %) and is not listed.
func TestTopSharesOfWhatGrew(t *testing.T) {
	d := map[string]amount{"grew": {10000, 10}, "shrank": {-9000, -9}, "also": {2500, 2}}
	got := top(d, KindGoHeap, 10, 5)
	sum := 0.0
	for _, s := range got {
		if s.GrowthBytes <= 0 {
			t.Errorf("listed %s, which did not grow (%+g B)", s.Site, s.GrowthBytes)
		}
		sum += s.Share
	}
	if len(got) != 2 || got[0].Site != "grew" || math.Abs(got[0].Share-0.8) > 1e-9 || math.Abs(sum-1) > 1e-9 {
		t.Errorf("top = %+v; want grew (80 %% of the growth), then also (20 %%)", got)
	}
}

// TestSiteOfSkipsTheRuntime: an allocation's site is the innermost frame
// that is the program's, not the allocator's (runtime.mallocgc) or a
// slice's growth helper; a stack of runtime frames only names its
// innermost frame.
func TestSiteOfSkipsTheRuntime(t *testing.T) {
	fn := func(name, file string) *profile.Function { return &profile.Function{Name: name, Filename: file} }
	loc := func(f *profile.Function, line int64) *profile.Location {
		return &profile.Location{Line: []profile.Line{{Function: f, Line: line}}}
	}
	s := &profile.Sample{Location: []*profile.Location{
		loc(fn("runtime.mallocgc", "/go/src/runtime/malloc.go"), 1000),
		loc(fn("runtime.growslice", "/go/src/runtime/slice.go"), 200),
		loc(fn("main.leakyAlloc", "/src/app/main.go"), 15),
		loc(fn("main.handler", "/src/app/main.go"), 30),
	}}
	if got, want := siteOf(s), "main.leakyAlloc (main.go:15)"; got != want {
		t.Errorf("siteOf = %q; want %q", got, want)
	}
	rt := &profile.Sample{Location: []*profile.Location{loc(fn("runtime.malg", "/go/src/runtime/proc.go"), 7), loc(fn("runtime.newproc1", "/go/src/runtime/proc.go"), 9)}}
	if got, want := siteOf(rt), "runtime.malg (proc.go:7)"; got != want {
		t.Errorf("siteOf(runtime only) = %q; want %q", got, want)
	}
}
