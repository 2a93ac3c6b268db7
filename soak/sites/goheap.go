package sites

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/soakd/soakd/soak/urlx"
)

// HeapPath is where net/http/pprof serves the heap profile.
const HeapPath = "/debug/pprof/heap"

// maxProfile bounds a fetched heap profile.
const maxProfile = 32 << 20

// amount is a site's live bytes and objects.
type amount struct{ bytes, objects float64 }

// fetchHeap gets a heap profile from u, asking for a GC first so that it
// counts live objects as of now.
func fetchHeap(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	return fetchHeapText(ctx, client, u, false)
}

// fetchHeapText is fetchHeap; with text, the profile comes in the legacy
// text form (debug=1), which also states the runtime's MemStats.
func fetchHeapText(ctx context.Context, client *http.Client, u string, text bool) ([]byte, error) {
	withGC, err := urlx.WithQuery(u, "gc", "1")
	if err == nil && text {
		withGC, err = urlx.WithQuery(withGC, "debug", "1")
	}
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, withGC, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", urlx.Redact(withGC), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxProfile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxProfile {
		return nil, fmt.Errorf("GET %s: the profile is over %d bytes", urlx.Redact(withGC), maxProfile)
	}
	return b, nil
}

// parseHeap parses a heap profile and checks it has inuse_space.
func parseHeap(b []byte) (*profile.Profile, error) {
	p, err := profile.ParseData(b)
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile: %w", err)
	}
	if _, err := valueIndex(p, "inuse_space"); err != nil {
		return nil, err
	}
	return p, nil
}

func valueIndex(p *profile.Profile, typ string) (int, error) {
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i, nil
		}
	}
	return 0, fmt.Errorf("the profile has no %s values: not a heap profile", typ)
}

// diffHeap subtracts start from end with pprof's own merge (start scaled
// by −1) and sums what is left by allocation site.
func diffHeap(start, end *profile.Profile) (map[string]amount, error) {
	base := start.Copy()
	base.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{end.Copy(), base})
	if err != nil {
		return nil, fmt.Errorf("diffing the heap profiles: %w", err)
	}
	return bySite(d)
}

// bySite sums a heap profile's inuse_space and inuse_objects by site.
func bySite(p *profile.Profile) (map[string]amount, error) {
	si, err := valueIndex(p, "inuse_space")
	if err != nil {
		return nil, err
	}
	oi, err := valueIndex(p, "inuse_objects")
	if err != nil {
		return nil, err
	}
	out := map[string]amount{}
	for _, s := range p.Sample {
		site := siteOf(s)
		a := out[site]
		a.bytes += float64(s.Value[si])
		a.objects += float64(s.Value[oi])
		out[site] = a
	}
	return out, nil
}

// siteOf names the innermost frame of a sample's stack outside the Go
// runtime: "main.leak (main.go:42)".
func siteOf(s *profile.Sample) string {
	first := ""
	for _, loc := range s.Location {
		for _, ln := range loc.Line { // innermost first, inlined frames included
			if ln.Function == nil {
				continue
			}
			name := fmt.Sprintf("%s (%s:%d)", ln.Function.Name, path.Base(ln.Function.Filename), ln.Line)
			if first == "" {
				first = name
			}
			if !runtimeFrame(ln.Function.Name) {
				return name
			}
		}
	}
	if first == "" {
		return "(unknown)"
	}
	return first
}

func runtimeFrame(fn string) bool {
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/") ||
		strings.HasPrefix(fn, "reflect.") || strings.HasPrefix(fn, "bytes.growSlice") ||
		strings.HasPrefix(fn, "strings.(*Builder).grow")
}

// heapAlloc reads "# HeapAlloc = N" from a heap profile's text form: the
// bytes of allocated heap objects, exact (the profile's own inuse_space
// is sampled, one allocation per MemProfileRate bytes). Fetched with gc=1
// it is the live heap after a collection.
func heapAlloc(b []byte) (float64, bool) {
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# HeapAlloc = ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// ReadsLiveHeap says the probe can read the target's live heap
// (LiveHeap): a Go heap profile is served.
func (p *Probe) ReadsLiveHeap() bool { return p != nil && p.kind == KindGoHeap }

// LiveHeap reads the target's live heap now: the Go heap profile fetched
// with gc=1 (a forced collection) in its text form, whose HeapAlloc is
// then the live heap. sites is the live bytes by allocation site as of
// that collection, from the profile fetched again without a collection
// (its inuse_space is as of the last one; sampled): nil when it could
// not be read.
func (p *Probe) LiveHeap(ctx context.Context) (bytes float64, sites map[string]float64, err error) {
	if !p.ReadsLiveHeap() {
		return 0, nil, fmt.Errorf("no heap profile to read the live heap from")
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	b, err := fetchHeapText(ctx, p.client, p.heapURL, true)
	if err != nil {
		return 0, nil, err
	}
	v, ok := heapAlloc(b)
	if !ok {
		return 0, nil, fmt.Errorf("GET %s?gc=1&debug=1: no \"# HeapAlloc = \" line (not a Go heap profile?)", urlx.Redact(p.heapURL))
	}
	return v, p.siteBytes(ctx), nil
}

// siteBytes is the heap profile's inuse_space by site, as of the last
// collection; nil when it cannot be read.
func (p *Probe) siteBytes(ctx context.Context) map[string]float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.heapURL, nil)
	if err != nil {
		return nil
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxProfile+1))
	if err != nil || resp.StatusCode != http.StatusOK || len(b) > maxProfile {
		return nil
	}
	prof, err := parseHeap(b)
	if err != nil {
		return nil
	}
	by, err := bySite(prof)
	if err != nil {
		return nil
	}
	out := make(map[string]float64, len(by))
	for k, a := range by {
		out[k] = a.bytes
	}
	return out
}
