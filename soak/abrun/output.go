package abrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// tailLines is how many of a build's last output lines a failed start
// shows, and lineCap how long each may be.
const (
	tailLines = 20
	lineCap   = 400
)

// output keeps the last lines a build's command wrote (its stdout and
// stderr, one stream), to show them when it fails to start. Without a
// log file of the user's the command writes to a FIFO that a goroutine
// drains into a ring of lines, so nothing grows on disk over a long run;
// with one, the lines are read back from the file, past its size at the
// start.
type output struct {
	path string // what the command writes to (ExecLog)

	// The user's log and its size before the start.
	file string
	from int64

	fifo *os.File
	dir  string
	done chan struct{}

	mu    sync.Mutex // guards lines and part
	lines []string
	part  []byte
}

// newOutput prepares where a build's output goes: the user's log, or a
// FIFO in a temporary directory.
func newOutput(userLog string) (*output, error) {
	if userLog != "" {
		o := &output{path: userLog, file: userLog}
		if st, err := os.Stat(userLog); err == nil {
			o.from = st.Size()
		}
		return o, nil
	}
	dir, err := os.MkdirTemp("", "soakd-ab-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "output")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// O_RDWR: the open does not wait for a writer, and the FIFO never
	// reads EOF while the build's processes come and go.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	o := &output{path: path, fifo: f, dir: dir, done: make(chan struct{})}
	go o.drain()
	return o, nil
}

// drain reads the FIFO until it is closed. Each read and the lines it
// adds happen under mu, so that tail, holding mu, sees every byte either
// added or still in the FIFO.
func (o *output) drain() {
	defer close(o.done)
	rc, err := o.fifo.SyscallConn()
	if err != nil {
		return
	}
	for {
		var end bool
		if err := rc.Read(func(fd uintptr) bool {
			o.mu.Lock()
			defer o.mu.Unlock()
			var again bool
			end, again = o.readLocked(fd)
			return !again
		}); err != nil || end {
			return
		}
	}
}

// readLocked reads what the FIFO holds now; again says it is empty, end
// that it failed.
func (o *output) readLocked(fd uintptr) (end, again bool) {
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(int(fd), buf)
		if n > 0 {
			o.add(buf[:n])
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return false, true
		}
		return true, false
	}
}

// add appends b's lines to the ring.
func (o *output) add(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			o.part = append(o.part, b[:min(len(b), max(lineCap-len(o.part), 0))]...)
			return
		}
		o.part = append(o.part, b[:min(i, max(lineCap-len(o.part), 0))]...)
		o.push(string(o.part))
		o.part, b = o.part[:0], b[i+1:]
	}
}

func (o *output) push(line string) {
	o.lines = append(o.lines, strings.TrimRight(line, "\r"))
	if len(o.lines) > tailLines {
		o.lines = o.lines[len(o.lines)-tailLines:]
	}
}

// unlink removes the FIFO's name once the command holds it open.
func (o *output) unlink() {
	if o.dir != "" {
		os.RemoveAll(o.dir)
		o.dir = ""
	}
}

// close stops the drain.
func (o *output) close() {
	o.unlink()
	if o.fifo != nil {
		o.fifo.Close()
		<-o.done
	}
}

// tail is the last lines written, each indented, or "" when none.
func (o *output) tail() string {
	lines := o.lastLines()
	if len(lines) == 0 {
		return ""
	}
	return "    " + strings.Join(lines, "\n    ")
}

// lastLines is the last tailLines lines written.
func (o *output) lastLines() []string {
	if o.fifo != nil {
		return o.fifoTail()
	}
	return fileTail(o.file, o.from)
}

func (o *output) fifoTail() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if rc, err := o.fifo.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { o.readLocked(fd) })
	}
	lines := append([]string(nil), o.lines...)
	if len(o.part) > 0 {
		lines = append(lines, string(o.part))
	}
	return lines[max(len(lines)-tailLines, 0):]
}

// fileTail is the last lines of path past offset from (at most 64 KiB).
func fileTail(path string, from int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	from = max(from, st.Size()-64<<10)
	b, err := io.ReadAll(io.NewSectionReader(f, from, st.Size()-from))
	if err != nil {
		return nil
	}
	var o output
	o.add(b)
	if len(o.part) > 0 {
		o.push(string(o.part))
	}
	return o.lines
}

// failed adds the build's last output to err, the error of its start.
func (o *output) failed(err error) error {
	t := o.tail()
	if t == "" {
		return fmt.Errorf("%w (it wrote nothing to stdout or stderr)", err)
	}
	return fmt.Errorf("%w; its last output lines (stdout and stderr):\n%s", err, t)
}

// Death is a build that died mid-run: the requests it served, its exit
// and the last lines its command wrote (stdout and stderr, one stream).
type Death struct {
	Build    string `json:"build"`    // "A" or "B"
	Requests uint64 `json:"requests"` // the build's requests served before it died
	// Exit is "code N" or "signal S" for a command soakd started; ""
	// when not known (a server soakd did not start).
	Exit string `json:"exit,omitempty"`
	// Output is the command's last output lines (at most 20, 400 bytes
	// each); empty for a server soakd did not start, or one that wrote
	// nothing.
	Output []string `json:"output,omitempty"`
}

// reapWait bounds the wait for the exit status of a build soakd started,
// once its death is seen: the watcher reports it as it reaps the process.
const reapWait = 2 * time.Second

// death is b's Death, read once it has died.
func (b *build) death() *Death {
	d := &Death{Build: b.name.String(), Requests: b.served}
	if b.out == nil {
		return d
	}
	e := b.target.Exit()
	for end := time.Now().Add(reapWait); (e == nil || !e.Known) && time.Now().Before(end); e = b.target.Exit() {
		time.Sleep(20 * time.Millisecond)
	}
	switch {
	case e == nil || !e.Known:
	case e.Signal != "":
		d.Exit = "signal " + e.Signal
	default:
		d.Exit = fmt.Sprintf("code %d", e.Code)
	}
	d.Output = b.out.lastLines()
	return d
}

// String is the death as an error line: the build, its requests, its exit
// and its last output lines, each indented.
func (d *Death) String() string {
	s := fmt.Sprintf("build %s died mid-run after %d of its requests", d.Build, d.Requests)
	if d.Exit != "" {
		s += " (exit " + d.Exit + ")"
	}
	switch {
	case len(d.Output) > 0:
		s += "; its last output lines (stdout and stderr):\n    " + strings.Join(d.Output, "\n    ")
	case d.Exit != "":
		s += "; it wrote nothing to stdout or stderr"
	}
	return s
}
