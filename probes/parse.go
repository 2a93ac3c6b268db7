package probes

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// statInfo is what soakd takes from /proc/PID/stat.
type statInfo struct {
	Comm       string
	State      byte
	PPID       int32
	UTime      uint64 // clock ticks
	STime      uint64 // clock ticks
	NumThreads uint64
	StartTime  uint64 // clock ticks after boot: the identity half of a PID
	VSize      uint64 // bytes
	RSSPages   uint64
}

// Errors returned by the parsers; tests compare against them.
var (
	errStatNoComm = errors.New("stat: no comm in parentheses")
	errStatShort  = errors.New("stat: fewer than 24 fields")
)

// parseStat parses /proc/PID/stat. The comm field may hold spaces and
// parentheses, so it spans from the first '(' to the last ')'.
func parseStat(b []byte) (statInfo, error) {
	var s statInfo
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return s, errStatNoComm
	}
	s.Comm = string(b[open+1 : closing])
	f := bytes.Fields(b[closing+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 24-2 {
		return s, errStatShort
	}
	if len(f[0]) != 1 || !isLetter(f[0][0]) {
		return s, fmt.Errorf("stat: field 3 (state) %q: not one letter", f[0])
	}
	s.State = f[0][0]
	ppid, err := statField(f, 4)
	if err != nil {
		return s, err
	}
	if ppid > math.MaxInt32 {
		return s, fmt.Errorf("stat: field 4 (ppid) %d: not a PID", ppid)
	}
	s.PPID = int32(ppid)
	dst := []*uint64{&s.UTime, &s.STime, &s.NumThreads, &s.StartTime, &s.VSize, &s.RSSPages}
	for i, n := range []int{14, 15, 20, 22, 23, 24} {
		if *dst[i], err = statField(f, n); err != nil {
			return s, err
		}
	}
	return s, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// statField parses field n (1-based, as in proc(5)) of a stat line split
// after the comm.
func statField(f [][]byte, n int) (uint64, error) {
	v, err := strconv.ParseUint(string(f[n-3]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat: field %d: %w", n, err)
	}
	return v, nil
}

// statusInfo is what soakd takes from /proc/PID/status.
type statusInfo struct {
	SwapBytes  uint64
	CtxVol     uint64
	CtxInvol   uint64
	HasCtx     bool
	UID        uint32 // real UID
	HasSwapRow bool
	// CPUsAllowed counts Cpus_allowed_list, the affinity mask that
	// sched_getaffinity returns; 0 when the line is missing.
	CPUsAllowed int
}

// parseStatus parses the VmSwap, Uid and context-switch lines of
// /proc/PID/status. Kernel threads have no VmSwap line; that is not an
// error, HasSwapRow says so.
func parseStatus(b []byte) (statusInfo, error) {
	var s statusInfo
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if err := s.parseLine(line); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (s *statusInfo) parseLine(line []byte) error {
	key, val, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return nil
	}
	var err error
	switch string(key) {
	case "VmSwap":
		s.SwapBytes, err = parseKB(val)
		s.HasSwapRow = true
	case "voluntary_ctxt_switches":
		s.CtxVol, err = parseUintField(val)
		s.HasCtx = true
	case "nonvoluntary_ctxt_switches":
		s.CtxInvol, err = parseUintField(val)
	case "Cpus_allowed_list":
		s.CPUsAllowed, _ = countCPUList(val)
		return nil
	case "Uid":
		var u uint64
		u, err = strconv.ParseUint(string(firstField(val)), 10, 32)
		s.UID = uint32(u)
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %s: %w", key, err)
	}
	return nil
}

// parseKB parses a value such as "  1234 kB" into bytes.
func parseKB(val []byte) (uint64, error) {
	f := bytes.Fields(val)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0, fmt.Errorf("%q: want \"N kB\"", bytes.TrimSpace(val))
	}
	n, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err == nil && n > math.MaxUint64/1024 {
		return 0, fmt.Errorf("%q: more than 2^64 bytes", bytes.TrimSpace(val))
	}
	return n * 1024, err
}

func parseUintField(val []byte) (uint64, error) {
	return strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
}

func firstField(val []byte) []byte {
	f := bytes.Fields(val)
	if len(f) == 0 {
		return nil
	}
	return f[0]
}

// ioInfo is /proc/PID/io: chars through read/write calls (sockets
// included) and bytes that reached the storage layer.
type ioInfo struct {
	RChar, WChar          uint64
	ReadBytes, WriteBytes uint64
}

// parseIO parses /proc/PID/io. All four fields must be present. It runs
// for every process on every sample, so it allocates nothing.
func parseIO(b []byte) (ioInfo, error) {
	var io ioInfo
	seen := 0
	for line := range bytes.Lines(b) {
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var p *uint64
		switch string(key) {
		case "rchar":
			p = &io.RChar
		case "wchar":
			p = &io.WChar
		case "read_bytes":
			p = &io.ReadBytes
		case "write_bytes":
			p = &io.WriteBytes
		default:
			continue
		}
		v, err := parseUintField(val)
		if err != nil {
			return io, fmt.Errorf("io: %s: %w", key, err)
		}
		*p = v
		seen++
	}
	if seen != 4 {
		return io, fmt.Errorf("io: %d of 4 fields (rchar, wchar, read_bytes, write_bytes)", seen)
	}
	return io, nil
}

// parseNoFile returns the soft "Max open files" limit of /proc/PID/limits;
// "unlimited" gives 0.
func parseNoFile(b []byte) (uint64, error) {
	const key = "Max open files"
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		soft := firstField(rest)
		if string(soft) == "unlimited" {
			return 0, nil
		}
		v, err := strconv.ParseUint(string(soft), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("limits: %s: %w", key, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("limits: no %q line", key)
}

// smapsInfo is the part of /proc/PID/smaps_rollup soakd uses, in bytes.
// PSSAnon is Pss_Anon + Pss_Shmem and Split says the kernel gave both;
// USSDirty is Private_Dirty.
type smapsInfo struct {
	PSS, USS, PSSAnon, USSDirty uint64
	Split                       bool
}

// parseSmapsRollup returns Pss, Private_Clean + Private_Dirty (USS),
// Private_Dirty, and Pss_Anon + Pss_Shmem where the kernel has them.
func parseSmapsRollup(b []byte) (smapsInfo, error) {
	var s smapsInfo
	var carry uint64
	seen, split := 0, 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(key) {
		case "Pss", "Private_Clean", "Private_Dirty", "Pss_Anon", "Pss_Shmem":
		default:
			continue
		}
		v, err := parseKB(val)
		if err != nil {
			return s, fmt.Errorf("smaps_rollup: %s: %w", key, err)
		}
		switch string(key) {
		case "Pss":
			s.PSS = v
		case "Pss_Anon", "Pss_Shmem":
			if s.PSSAnon, carry = bits.Add64(s.PSSAnon, v, 0); carry != 0 {
				return s, fmt.Errorf("smaps_rollup: Pss_Anon + Pss_Shmem: more than 2^64 bytes")
			}
			split++
			continue
		default:
			if string(key) == "Private_Dirty" {
				s.USSDirty = v
			}
			if s.USS, carry = bits.Add64(s.USS, v, 0); carry != 0 {
				return s, fmt.Errorf("smaps_rollup: Private_Clean + Private_Dirty: more than 2^64 bytes")
			}
		}
		seen++
	}
	if seen != 3 {
		return s, fmt.Errorf("smaps_rollup: %d of 3 fields (Pss, Private_Clean, Private_Dirty)", seen)
	}
	s.Split = split == 2
	if !s.Split {
		s.PSSAnon = 0
	}
	return s, nil
}
