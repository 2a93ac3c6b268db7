package sites

import (
	"fmt"
	"sync"

	"github.com/soakd/soakd/soak/model"
)

// DefaultEvidenceLimit bounds the evidence a run keeps: 8 MiB.
const DefaultEvidenceLimit = 8 << 20

// Evidence collects a run's snapshot files within a size limit. It is
// safe for concurrent use.
type Evidence struct {
	mu    sync.Mutex // guards all below
	limit int64
	used  int64
	files []model.EvidenceFile
}

// NewEvidence returns an Evidence that keeps at most limit bytes
// (DefaultEvidenceLimit when limit <= 0).
func NewEvidence(limit int64) *Evidence {
	if limit <= 0 {
		limit = DefaultEvidenceLimit
	}
	return &Evidence{limit: limit}
}

// Limit is the most bytes e keeps.
func (e *Evidence) Limit() int64 { return e.limit }

// Add keeps data under name, replacing a file of that name. Past the limit
// the file is cut to what is left (a profile cut short is useless, so a
// binary one is dropped whole), and the file says so.
func (e *Evidence) Add(name, kind string, data []byte, binary bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, f := range e.files {
		if f.Name == name {
			e.used -= f.Bytes
			e.files = append(e.files[:i], e.files[i+1:]...)
			break
		}
	}
	f := model.EvidenceFile{Name: name, Kind: kind, Bytes: int64(len(data)), Data: data}
	if left := e.limit - e.used; int64(len(data)) > left {
		f.CutFromBytes = int64(len(data))
		switch {
		case binary || left <= 0:
			f.Data, f.Bytes = nil, 0
		default:
			f.Data, f.Bytes = data[:left], left
		}
	}
	e.used += f.Bytes
	e.files = append(e.files, f)
}

// Files returns the files kept, in the order they were added.
func (e *Evidence) Files() []model.EvidenceFile {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]model.EvidenceFile(nil), e.files...)
}

// Cut says, in a sentence, what was cut; "" when nothing was.
func (e *Evidence) Cut() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, cut := 0, int64(0)
	for _, f := range e.files {
		if f.CutFromBytes > 0 {
			n++
			cut += f.CutFromBytes - f.Bytes
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d snapshot file(s) cut, %d bytes left out, to keep the run's evidence within %d bytes", n, cut, e.limit)
}
