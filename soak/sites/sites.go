package sites

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/google/pprof/profile"

	"github.com/soakd/soakd/soak/urlx"
	"github.com/soakd/soakd/soak/verdict"
)

// Kinds of site, as verdict.Site.Kind says them.
const (
	KindGoHeap   = "go-heap"
	KindJVMClass = "jvm-class"
)

// Off as Options.Pprof turns the pprof probe off.
const Off = "off"

// Options says where to look for allocation sites.
type Options struct {
	// Pprof is the heap profile's URL (--pprof); "" probes HeapPath on the
	// target's own host:port, Off looks nowhere.
	Pprof string
	// SnapshotCmd is run through sh -c at the soak's start and end with
	// {pid} replaced by the target's PID; its output is kept as evidence.
	SnapshotCmd string
	// NoJVM keeps jcmd off a JVM target (it forces a full GC).
	NoJVM bool
	// Timeout bounds each snapshot (default 60 s).
	Timeout time.Duration
	// MaxSites is the number of sites reported (default 5).
	MaxSites int
	Log      *zap.Logger
}

// Target is what the probe looks at.
type Target struct {
	PID  int
	Comm string // the root's command name
	URL  string // the load's first endpoint, for the pprof probe
}

// snap is one moment's snapshot: a heap profile or a class histogram.
type snap struct {
	heap     *profile.Profile
	classes  map[string]amount
	requests float64
}

// Probe takes the snapshots of one run.
type Probe struct {
	o      Options
	t      Target
	ev     *Evidence
	client *http.Client

	heapURL string // the Go heap profile's URL, or ""
	jcmd    string // jcmd's path, or ""
	kind    string

	mu    sync.Mutex // guards all below
	hint  int        // the index of otherRuntime's note in notes; -1: none
	notes []string
	snaps map[string]*snap // by label: "start", "end"
}

// Open finds what can be looked at in t: a heap profile (o.Pprof, or one
// served at HeapPath on t's port), a JVM's class histogram, or neither,
// and says which in its notes.
func Open(ctx context.Context, o Options, t Target, ev *Evidence) *Probe {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if o.MaxSites <= 0 {
		o.MaxSites = 5
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	p := &Probe{o: o, t: t, ev: ev, client: &http.Client{Timeout: o.Timeout}, snaps: map[string]*snap{}, hint: -1}
	switch {
	case o.Pprof != "" && o.Pprof != Off:
		p.heapURL, p.kind = o.Pprof, KindGoHeap
	case o.Pprof == "" && t.URL != "":
		p.probePprof(ctx)
	}
	if p.kind == "" && isJVM(t.Comm) && !o.NoJVM {
		p.findJcmd()
	}
	if p.kind == "" {
		p.hint = len(p.notes)
		p.note(otherRuntime(t.Comm, o.SnapshotCmd != ""))
	}
	return p
}

// Rehint words the hint of a probe that found nothing to look at for the
// process that carries the growth (pid, command name comm), when it is
// not the root the probe was opened on: a tree whose root is a shell and
// whose growth is in a python3 child gets the Python hint, not the
// jemalloc one.
func (p *Probe) Rehint(pid int, comm string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kind != "" || p.hint < 0 || pid == p.t.PID {
		return
	}
	p.notes[p.hint] = fmt.Sprintf("the growth is in pid %d (%s), not the root pid %d (%s): %s",
		pid, comm, p.t.PID, p.t.Comm, otherRuntime(comm, p.o.SnapshotCmd != ""))
}

// probePprof looks for net/http/pprof's heap profile on the target's port.
func (p *Probe) probePprof(ctx context.Context) {
	u, err := urlx.Parse(p.t.URL, urlx.HTTP)
	if err != nil {
		return
	}
	hu := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: HeapPath}).String()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := fetchHeap(ctx, p.client, hu)
	if err != nil {
		return
	}
	if _, err := parseHeap(b); err != nil {
		return
	}
	p.heapURL, p.kind = hu, KindGoHeap
	p.note("found a Go heap profile at " + hu + " (net/http/pprof): heap profiles taken at the soak's start and end")
}

func (p *Probe) findJcmd() {
	j, err := exec.LookPath("jcmd")
	if err != nil {
		p.note("a JVM target: with jcmd on PATH (a JDK), soakd would diff its GC.class_histogram at the soak's start and end")
		return
	}
	p.jcmd, p.kind = j, KindJVMClass
	p.note("a JVM target: class histograms (jcmd GC.class_histogram, a full GC each) taken before the load starts and after it ends")
}

func isJVM(comm string) bool { return comm == "java" || strings.HasPrefix(comm, "java") }

// otherRuntime says what would let soakd look inside a target it cannot.
func otherRuntime(comm string, hasCmd bool) string {
	s := "no allocation sites: the target serves no Go heap profile (--pprof URL) and is no JVM"
	switch {
	case strings.HasPrefix(comm, "python"):
		s += "; for Python, serve a tracemalloc snapshot behind an endpoint and fetch it with --snapshot-cmd"
	case strings.HasPrefix(comm, "node"):
		s += "; for Node, write a heap snapshot (--heapsnapshot-signal) with --snapshot-cmd"
	default:
		s += "; for a glibc malloc program, preload jemalloc with MALLOC_CONF=prof:true (or heaptrack) and dump its profile with --snapshot-cmd"
	}
	if hasCmd {
		s += "; the --snapshot-cmd output is kept beside the report"
	}
	return s
}

func (p *Probe) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, s)
	p.o.Log.Info("sites: " + s)
}

// ForcesGC says whether a snapshot forces a full GC of the target (a
// JVM's class histogram).
func (p *Probe) ForcesGC() bool { return p.kind == KindJVMClass }

// Notes says what was looked at and what failed, a sentence each.
func (p *Probe) Notes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notes)
}

// Snap takes the snapshots labelled label ("start" or "end"); requests
// reads the load's count of requests once the snapshot is taken: jcmd
// spends most of its time starting a JVM of its own before the histogram,
// and a heap profile is written as its request ends, so the count after
// is the one that matches.
func (p *Probe) Snap(ctx context.Context, label string, requests func() uint64) {
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	var s *snap
	var err error
	switch p.kind {
	case KindGoHeap:
		s, err = p.snapHeap(ctx, label)
	case KindJVMClass:
		s, err = p.snapJVM(ctx, label)
	}
	if err != nil {
		p.note(fmt.Sprintf("the %s snapshot failed: %v", label, err))
	}
	if p.o.SnapshotCmd != "" {
		p.runCmd(ctx, label)
	}
	if s != nil {
		s.requests = float64(requests())
		p.mu.Lock()
		p.snaps[label] = s
		p.mu.Unlock()
	}
}

func (p *Probe) snapHeap(ctx context.Context, label string) (*snap, error) {
	b, err := fetchHeap(ctx, p.client, p.heapURL)
	if err != nil {
		return nil, err
	}
	p.ev.Add("heap-"+label+".pb.gz", "go-heap", b, true)
	prof, err := parseHeap(b)
	if err != nil {
		return nil, err
	}
	return &snap{heap: prof}, nil
}

func (p *Probe) snapJVM(ctx context.Context, label string) (*snap, error) {
	b, err := jcmdHistogram(ctx, p.jcmd, p.t.PID)
	if err != nil {
		return nil, err
	}
	p.ev.Add("class-histogram-"+label+".txt", "jvm-histogram", b, false)
	h, err := parseHistogram(b)
	if err != nil {
		return nil, err
	}
	return &snap{classes: h}, nil
}

// runCmd runs the user's snapshot command and keeps its output.
func (p *Probe) runCmd(ctx context.Context, label string) {
	line := strings.ReplaceAll(p.o.SnapshotCmd, "{pid}", strconv.Itoa(p.t.PID))
	out, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput()
	if err != nil {
		p.note(fmt.Sprintf("--snapshot-cmd at the soak's %s: %v", label, err))
		out = append(out, fmt.Sprintf("\n[soakd: the command failed: %v]\n", err)...)
	}
	p.ev.Add("snapshot-cmd-"+label+".txt", "snapshot-cmd", out, false)
}

// Sites returns the sites that grew between the start and end snapshots,
// most first, with their growth per request; nil without both.
func (p *Probe) Sites() []verdict.Site {
	p.mu.Lock()
	a, b := p.snaps["start"], p.snaps["end"]
	p.mu.Unlock()
	if a == nil || b == nil {
		return nil
	}
	var d map[string]amount
	if a.heap != nil && b.heap != nil {
		var err error
		if d, err = diffHeap(a.heap, b.heap); err != nil {
			p.note(err.Error())
			return nil
		}
	} else {
		d = diffClasses(a.classes, b.classes)
	}
	return top(d, p.kind, b.requests-a.requests, p.o.MaxSites)
}

// diffClasses is end − start, class by class.
func diffClasses(start, end map[string]amount) map[string]amount {
	d := make(map[string]amount, len(end))
	for k, e := range end {
		s := start[k]
		d[k] = amount{bytes: e.bytes - s.bytes, objects: e.objects - s.objects}
	}
	return d
}

// minShare is the least share of the growth a site must carry to be
// reported, and minPerRequest the least growth per request: below them
// are the runtime's own small changes (a flat JVM's byte[] moved by
// 0.05 B a request), far under any leak floor.
const (
	minShare      = 0.01
	minPerRequest = 1.0 // bytes
)

// top keeps the n sites that grew most, with their shares of the growth.
func top(d map[string]amount, kind string, requests float64, n int) []verdict.Site {
	var out []verdict.Site
	total := 0.0
	for k, a := range d {
		if a.bytes <= 0 {
			continue
		}
		total += a.bytes
		s := verdict.Site{Site: k, Kind: kind, GrowthBytes: a.bytes, GrowthObjects: a.objects}
		if requests > 0 {
			s.PerRequest, s.ObjectsPerRequest = a.bytes/requests, a.objects/requests
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y verdict.Site) int {
		return cmp.Or(cmp.Compare(y.GrowthBytes, x.GrowthBytes), cmp.Compare(x.Site, y.Site))
	})
	kept := out[:0]
	for _, s := range out {
		if s.Share = s.GrowthBytes / total; s.Share < minShare {
			break
		}
		if requests > 0 && s.PerRequest < minPerRequest {
			continue
		}
		kept = append(kept, s)
	}
	return kept[:min(len(kept), n)]
}
