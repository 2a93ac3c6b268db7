// Package field carries an error about one setting by the setting's path
// in a run's spec ("load.rate", "target.pid"), not by the spelling of a
// front end. `soakd run` words a path as its flag (--rate), the daemon's
// config as the file, line and key. A package that checks or uses a
// setting (the probes, the runner) returns these errors and never names a
// flag.
package field

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Error is one problem with the setting at Path. Msg may name other
// settings as {section.key}; Text words them. A word in braces without a
// dot ({pid}, {port}: a placeholder the user writes) is text.
type Error struct {
	Path string
	Msg  string
}

// Errorf returns an Error at path. Like fmt.Errorf, %w keeps the cause
// for errors.Is and errors.As.
func Errorf(path, format string, args ...any) error {
	cause := fmt.Errorf(format, args...)
	return &wrapped{Error{Path: path, Msg: cause.Error()}, errors.Unwrap(cause)}
}

// wrapped is one Error that keeps its cause.
type wrapped struct {
	err   Error
	cause error
}

func (w *wrapped) Error() string { return w.err.Error() }
func (w *wrapped) Unwrap() error { return w.cause }

// As lets errors.As find w as Errors.
func (w *wrapped) As(target any) bool {
	if t, ok := target.(*Errors); ok {
		*t = Errors{w.err}
		return true
	}
	return false
}

// Error words the path and the settings it names as paths.
func (e Error) Error() string { return e.Path + ": " + e.Text(func(p string) string { return p }) }

// Text is the message with each {path} worded by name.
func (e Error) Text(name func(path string) string) string {
	return ref.ReplaceAllStringFunc(e.Msg, func(m string) string { return name(m[1 : len(m)-1]) })
}

// ref is a setting's path in braces: every path has a section and a key.
var ref = regexp.MustCompile(`\{[a-z_]+(?:\.[a-z_]+)+\}`)

// Errors are several problems, in the order they were found.
type Errors []Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Add appends an Error at path.
func (es *Errors) Add(path, format string, args ...any) {
	*es = append(*es, Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Err is es as an error, nil when empty.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// As returns the field errors in err's chain (one error, or a list), or
// nil when it holds none.
func As(err error) Errors {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	return nil
}
