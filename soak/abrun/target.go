package abrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/urlx"
)

// PortToken is replaced, in a build's command, by the free loopback port
// soakd picked for it.
const PortToken = "{port}"

// Target says how to find one build. Exec starts a command (its PortToken
// replaced by a free loopback port, which then makes the URL); URL and PID
// name a server already running (with no PID, the process that listens
// on URL's port).
type Target struct {
	Exec string
	URL  string // scheme://host:port, the base the paths are joined to
	PID  int
	// ExecLog receives the started command's output; "" discards it.
	ExecLog string
}

// build is one build while the run goes: its target, sampler and URLs.
type build struct {
	name    Build
	target  *probes.Target
	sampler *probes.Sampler
	urls    []string
	served  uint64 // requests completed so far
	last    probes.Sample
	out     *output // the started command's last output lines; nil for a running server
}

// open starts or finds the build and makes its sampler; field names the
// option in errors ("a", "b").
func open(ctx context.Context, name Build, t Target, paths []string, ready time.Duration, log *zap.Logger) (*build, error) {
	field := strings.ToLower(name.String())
	base := t.URL
	spec := probes.Spec{PID: t.PID, Exec: t.Exec, ExecLog: t.ExecLog, ReadyTimeout: ready}
	if t.Exec != "" && base == "" {
		if !strings.Contains(t.Exec, PortToken) {
			return nil, fmt.Errorf("%s: the command must hold %s where its listening port goes (or give %s-url)", field, PortToken, field)
		}
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("%s: picking a free port: %w", field, err)
		}
		spec.Exec = strings.ReplaceAll(t.Exec, PortToken, strconv.Itoa(port))
		base = "http://127.0.0.1:" + strconv.Itoa(port)
	}
	if base == "" {
		return nil, fmt.Errorf("%s: give a command (--%s) or a URL (--%s-url)", field, field, field)
	}
	if _, err := urlx.Parse(base, urlx.HTTP); err != nil {
		return nil, fmt.Errorf("%s-url: %w", field, err)
	}
	var err error
	b := &build{name: name}
	for _, p := range paths {
		b.urls = append(b.urls, strings.TrimSuffix(base, "/")+"/"+strings.TrimPrefix(p, "/"))
	}
	spec.URL = b.urls[0]
	if spec.Exec != "" {
		if b.out, err = newOutput(spec.ExecLog); err != nil {
			return nil, fmt.Errorf("%s: its output: %w", field, err)
		}
		spec.ExecLog = b.out.path
	}
	b.target, err = probes.Open(ctx, spec, log.With(zap.String("build", name.String())))
	if b.out != nil {
		b.out.unlink()
	}
	if err != nil {
		if b.out != nil {
			err = b.out.failed(err)
			b.out.close()
		}
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	b.sampler = probes.NewSampler(b.target, probes.SamplerOptions{SmapsInterval: -1, SocketInterval: -1, Log: log})
	b.last = b.sampler.Sample()
	return b, nil
}

// close stops a build soakd started.
func (b *build) close(log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.target.Close(ctx); err != nil {
		log.Warn("stopping the target", zap.Stringer("build", b.name), zap.Error(err))
	}
	if b.out != nil {
		b.out.close()
	}
}

// freePort is a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// onCPU is the on-CPU time, in seconds, of the build's processes (those of
// its last sample), summed over their threads' schedstat: nanoseconds,
// where /proc/PID/stat counts 10 ms ticks, too coarse for a block of a
// few thousand requests. A process whose threads cannot be read counts
// its stat time instead. wait is the time the threads that could be read
// were runnable but waited for a core (schedstat's second field).
func (b *build) onCPU() (cpu, wait float64) {
	pids := []int32{b.last.RootPID}
	if len(b.last.Members) > 0 {
		pids = pids[:0]
		for _, m := range b.last.Members {
			pids = append(pids, m.PID)
		}
	}
	var sum float64
	for _, pid := range pids {
		ns, w, ok := taskCPU(pid)
		if !ok {
			for _, m := range b.last.Members {
				if m.PID == pid {
					sum += m.CPU
				}
			}
			continue
		}
		sum += ns / 1e9
		wait += w / 1e9
	}
	return sum, wait
}

// taskCPU sums the first two fields of every thread's schedstat of pid:
// the nanoseconds on a core, and runnable waiting for one.
func taskCPU(pid int32) (run, wait float64, ok bool) {
	dir := filepath.Join("/proc", strconv.Itoa(int(pid)), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, false
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // a thread gone since the listing
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return 0, 0, false
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		w, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			return 0, 0, false
		}
		run, wait = run+v, wait+w
	}
	return run, wait, true
}
