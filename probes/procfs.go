package probes

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// procFS reads small procfs and cgroupfs files with raw syscalls into one
// reused buffer: no os.File, no poller registration, no allocation per
// read. It is not safe for concurrent use; the Sampler holds one under its
// mutex.
type procFS struct {
	root  string // e.g. "/proc"
	buf   []byte
	dent  []byte
	link  []byte
	path  []byte
	cpath []byte // a NUL-terminated copy of a path, for rawOpen
	// procfs is 1 when root is a procfs mount, -1 when not, 0 before the
	// first check.
	procfs int8
}

func newProcFS(root string) *procFS {
	return &procFS{
		root: root,
		buf:  make([]byte, 16<<10),
		dent: make([]byte, 16<<10),
		link: make([]byte, 128),
	}
}

// pidPath returns root/pid/name, reusing one buffer.
func (p *procFS) pidPath(pid int32, name string) string {
	p.path = append(p.path[:0], p.root...)
	p.path = append(p.path, '/')
	p.path = strconv.AppendInt(p.path, int64(pid), 10)
	if name != "" {
		p.path = append(p.path, '/')
		p.path = append(p.path, name...)
	}
	return string(p.path)
}

// readPid reads root/pid/name. The returned slice is valid until the next
// read.
func (p *procFS) readPid(pid int32, name string) ([]byte, error) {
	return p.read(p.pidPath(pid, name))
}

// read reads a whole small file that answers at once (stat, status, io,
// a cgroup file) with raw system calls (rawsys.go); the returned slice is
// valid until the next read.
func (p *procFS) read(path string) ([]byte, error) {
	p.cpath = append(append(p.cpath[:0], path...), 0)
	fd, err := rawOpen(p.cpath)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer rawClose(fd)
	return p.readAll(path, fd, rawRead)
}

// readSlow reads a whole file whose read may take long (smaps_rollup, a
// socket table) with ordinary system calls, so that the runtime can hand
// its P on meanwhile.
func (p *procFS) readSlow(path string) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	return p.readAll(path, fd, unix.Read)
}

// readAll reads fd to its end into p.buf with rd.
func (p *procFS) readAll(path string, fd int, rd func(int, []byte) (int, error)) ([]byte, error) {
	n := 0
	for {
		if n == len(p.buf) {
			p.buf = append(p.buf, make([]byte, len(p.buf))...)
		}
		m, err := rd(fd, p.buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return p.buf[:n], nil
		}
		n += m
	}
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fdScan counts the entries of root/pid/fd and, when sockets is not nil,
// adds the inode of every socket fd to it. Getting the inode takes one
// readlinkat per fd (the only way procfs tells an fd's kind); it runs
// against the already open directory, so no path lookup is repeated.
func (p *procFS) fdScan(pid int32, sockets map[uint64]struct{}) (uint64, error) {
	if sockets == nil {
		return p.fdSockets(pid, nil)
	}
	return p.fdSockets(pid, func(ino uint64) { sockets[ino] = struct{}{} })
}

// fdSockets counts the entries of root/pid/fd and, when fn is not nil,
// calls it with the inode of every socket fd (a readlinkat per fd).
func (p *procFS) fdSockets(pid int32, fn func(ino uint64)) (uint64, error) {
	path := p.pidPath(pid, "fd")
	dir, err := openRetry(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(dir)
	var count uint64
	err = p.eachDirent(dir, func(name []byte) {
		count++
		if fn != nil {
			p.addSocket(dir, name, fn)
		}
	})
	if err != nil {
		return count, &os.PathError{Op: "getdents", Path: path, Err: err}
	}
	return count, nil
}

var socketPrefix = []byte("socket:[")

// addSocket reads the link of one fd and hands fn a socket's inode.
func (p *procFS) addSocket(dir int, name []byte, fn func(ino uint64)) {
	n, err := unix.Readlinkat(dir, string(name), p.link)
	if err != nil || n < len(socketPrefix)+2 {
		return // closed meanwhile, or too short to be a socket
	}
	l := p.link[:n]
	rest, ok := bytes.CutPrefix(l, socketPrefix)
	if !ok || rest[len(rest)-1] != ']' {
		return
	}
	ino, err := strconv.ParseUint(string(rest[:len(rest)-1]), 10, 64)
	if err == nil {
		fn(ino)
	}
}

// eachDirent calls fn with the name of every entry of an open directory
// but "." and "..". The name is only valid during the call.
func (p *procFS) eachDirent(dir int, fn func(name []byte)) error {
	for {
		n, err := unix.Getdents(dir, p.dent)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		parseDirents(p.dent[:n], fn)
	}
}

// parseDirents walks a buffer of linux_dirent64 records.
func parseDirents(buf []byte, fn func(name []byte)) {
	const nameOff = 19 // ino(8) off(8) reclen(2) type(1)
	for len(buf) >= nameOff {
		reclen := int(buf[16]) | int(buf[17])<<8
		if reclen < nameOff || reclen > len(buf) {
			return
		}
		name := buf[nameOff:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		buf = buf[reclen:]
		if string(name) == "." || string(name) == ".." {
			continue
		}
		fn(name)
	}
}

// listPIDs calls fn with every numeric entry of the procfs root.
func (p *procFS) listPIDs(fn func(pid int32)) error {
	dir, err := openRetry(p.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return &os.PathError{Op: "open", Path: p.root, Err: err}
	}
	defer unix.Close(dir)
	return p.eachDirent(dir, func(name []byte) {
		if pid, ok := atoiPID(name); ok {
			fn(pid)
		}
	})
}

// atoiPID parses a positive decimal PID without allocating.
func atoiPID(b []byte) (int32, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	var n int32
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int32(c-'0')
	}
	return n, n > 0
}

// isDenied says whether err is a permission error.
func isDenied(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// eachTask calls fn with the thread IDs of pid.
func (p *procFS) eachTask(pid int32, fn func(tid int32)) error {
	path := p.pidPath(pid, "task")
	dir, err := openRetry(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(dir)
	return p.eachDirent(dir, func(name []byte) {
		if tid, ok := atoiPID(name); ok {
			fn(tid)
		}
	})
}

// readTask reads root/pid/task/tid/name; the slice is valid until the next
// read.
func (p *procFS) readTask(pid, tid int32, name string) ([]byte, error) {
	p.pidPath(pid, "task/")
	p.path = strconv.AppendInt(p.path, int64(tid), 10)
	p.path = append(p.path, '/')
	p.path = append(p.path, name...)
	return p.read(string(p.path))
}

// fdCount returns the number of open fds of pid. Since Linux 6.2 the size
// of /proc/PID/fd is that number, one stat instead of a directory listing;
// older kernels report 0 there, and then the directory is listed.
func (p *procFS) fdCount(pid int32) (uint64, error) {
	path := p.pidPath(pid, "fd")
	var st unix.Stat_t
	p.cpath = append(append(p.cpath[:0], path...), 0)
	if err := rawStat(p.cpath, &st); err != nil {
		return 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Size > 0 && p.isProcfs() {
		return uint64(st.Size), nil
	}
	return p.fdScan(pid, nil)
}

// isProcfs says whether root is a real procfs (not a fixture tree, whose
// directory sizes mean nothing).
func (p *procFS) isProcfs() bool {
	if p.procfs == 0 {
		p.procfs = -1
		var st unix.Statfs_t
		if unix.Statfs(p.root, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC {
			p.procfs = 1
		}
	}
	return p.procfs == 1
}

// nsInode returns the inode of root/pid/ns/net: two processes with the
// same one share a network namespace.
func (p *procFS) nsInode(pid string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p.root+"/"+pid+"/ns/net", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
