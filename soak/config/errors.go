package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a config file, at a line and a field path.
type Error struct {
	File string
	Line int    // 0 when unknown
	Path string // e.g. "jobs[2].load.rate"; "" for the whole file
	Msg  string
}

// Error formats e as "FILE:LINE: PATH: MSG".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errorList collects the errors of one file and remembers where each
// field path is.
type errorList struct {
	file  string
	lines map[string]int // field path -> line
	errs  []*Error
}

func newErrorList(file string) *errorList {
	return &errorList{file: file, lines: map[string]int{}}
}

// at adds an error at an explicit line.
func (l *errorList) at(line int, path, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// add adds an error at path's line, or its nearest ancestor's when path
// is not in the file (a missing field).
func (l *errorList) add(path, format string, args ...any) {
	l.at(l.line(path), path, format, args...)
}

func (l *errorList) line(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if n, ok := l.lines[p]; ok {
			return n
		}
	}
	return 0
}

// parentPath drops the last ".name" or "[i]" of p.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// err returns the collected errors sorted by line, joined, or nil.
func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
	errs := make([]error, len(l.errs))
	for i, e := range l.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}
