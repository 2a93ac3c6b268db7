package probes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/field"
)

// Kind is one way to find the target: the Spec field that picks it, how
// the process is located and how the report names it. The checks, the
// resolver, Describe, the runner's flags and config, and every error that
// lists the kinds read this table; a new kind (a cgroup path, a
// container) is one more entry in kinds.
type Kind struct {
	// Name is the kind's field in a run's spec (target.<Name>): its YAML
	// key and its flag (--<Name>). "port", the default, has no field.
	Name string
	// Usage says what a value picks, for a flag's help.
	Usage string
	// Example is a value as a user writes it.
	Example string
	// Field returns s's field that sets the kind, an *int or a *string;
	// nil for the default kind.
	Field func(s *Spec) any
	// Starts says soakd starts the process rather than finding one, so a
	// remote source may still sample it through its metrics.
	Starts bool

	check    func(s *Spec) error                                  // the value's form, before anything is read
	prepare  func(t *Target) error                                // at Open, after check; nil: nothing
	locate   func(t *Target, ctx context.Context) (procID, error) // the root now
	describe func(s *Spec) string                                 // Describe's prefix
	follow   bool                                                 // located again at every sample (the file or cgroup says who it is)
	once     bool                                                 // the root never comes back once gone
	cgroup   bool                                                 // the members are a cgroup's processes, not the root's descendants
}

var (
	kindPID = &Kind{
		Name: "pid", Usage: "the process with this PID, and its descendants", Example: "1234",
		Field: func(s *Spec) any { return &s.PID },
		check: func(s *Spec) error {
			if s.PID < 0 {
				return field.Errorf("target.pid", "must be > 0, got %d", s.PID)
			}
			return nil
		},
		locate: func(t *Target, _ context.Context) (procID, error) { return t.locatePID() },
		once:   true,
	}
	kindPIDFile = &Kind{
		Name: "pidfile", Usage: "the PID in this file, re-read on every sample", Example: "/run/nginx.pid",
		Field:  func(s *Spec) any { return &s.PIDFile },
		locate: func(t *Target, _ context.Context) (procID, error) { return t.locatePIDFile() },
		follow: true,
	}
	kindMatch = &Kind{
		Name: "match", Usage: "the one root process whose full command line matches this regexp", Example: "nginx: master",
		Field: func(s *Spec) any { return &s.Match },
		check: func(s *Spec) error {
			if _, err := regexp.Compile(s.Match); err != nil {
				var se *syntax.Error
				if errors.As(err, &se) {
					return field.Errorf("target.match", "%q: bad regexp: %s", s.Match, se.Code)
				}
				return field.Errorf("target.match", "%q: bad regexp: %w", s.Match, err)
			}
			return nil
		},
		prepare: func(t *Target) error { t.re = regexp.MustCompile(t.spec.Match); return nil }, // checked
		locate:  (*Target).locateMatch,
	}
	kindUnit = &Kind{
		Name: "unit", Usage: "the processes of this systemd unit's cgroup, e.g. nginx.service", Example: "nginx.service",
		Field:    func(s *Spec) any { return &s.Unit },
		prepare:  (*Target).findUnit,
		locate:   func(t *Target, _ context.Context) (procID, error) { return t.locateUnit() },
		describe: func(s *Spec) string { return "unit " + s.Unit + ": " },
		follow:   true,
		cgroup:   true,
	}
	kindExec = &Kind{
		Name: "exec", Usage: "start this command, wait for URL's port, soak it, stop it", Example: "./server --port 8080",
		Field: func(s *Spec) any { return &s.Exec },
		check: func(s *Spec) error {
			if _, err := splitCommand(s.Exec); err != nil {
				return field.Errorf("target.exec", "%q: %w", s.Exec, err)
			}
			return nil
		},
		locate: func(t *Target, _ context.Context) (procID, error) {
			return procID{}, fmt.Errorf("pid %d is gone", t.root.PID)
		},
		describe: func(*Spec) string { return "started " },
		Starts:   true,
		once:     true,
	}
	kindPort = &Kind{
		Name: "port", Usage: "the owner of the load URL's listening port, when no other kind is set",
		prepare: func(t *Target) (err error) {
			if t.port, err = localPort(t.spec.URL); err != nil {
				return field.Errorf("target", "no target given and %w; set one of %s", err, KindFlags("or"))
			}
			return nil
		},
		locate: (*Target).locatePort,
	}
)

// kinds is the table, in the order a spec lists its fields; the default
// kind comes last. init fills it: the entries' messages list the table.
var kinds []*Kind

func init() { kinds = []*Kind{kindPID, kindPIDFile, kindMatch, kindUnit, kindExec, kindPort} }

// Kinds returns the table of target kinds, the default (port, which no
// field sets) last. The entries are shared: do not modify them.
func Kinds() []*Kind { return kinds }

// KindFlags lists the fields that set a kind as {target.<name>} for a
// message, the last joined with conj ("or", "and").
func KindFlags(conj string) string {
	var names []string
	for _, k := range kinds {
		if k.Field != nil {
			names = append(names, "{target."+k.Name+"}")
		}
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// isSet says whether s sets k's field.
func (k *Kind) isSet(s *Spec) bool {
	switch v := k.Field(s).(type) {
	case *int:
		return *v != 0
	case *string:
		return *v != ""
	}
	panic("probes: kind " + k.Name + ": a field of an unknown type") // a bug in the table
}

// SetKinds lists the kinds whose field s sets, in table order.
func (s *Spec) SetKinds() []*Kind {
	var set []*Kind
	for _, k := range kinds {
		if k.Field != nil && k.isSet(s) {
			set = append(set, k)
		}
	}
	return set
}

// Kind returns the kind s picks: the one whose field is set, or the
// default (port) when none is. With several set, it is the first; Check
// says so.
func (s *Spec) Kind() *Kind {
	if set := s.SetKinds(); len(set) > 0 {
		return set[0]
	}
	return kindPort
}

// Named names the target s picks as the user set it, its kind and value
// ("pid 1234", "unit nginx.service"); "" for the default kind, the owner
// of the load URL's port. Describe names the process found.
func (s *Spec) Named() string {
	k := s.Kind()
	if k.Field == nil {
		return ""
	}
	switch v := k.Field(s).(type) {
	case *int:
		return k.Name + " " + strconv.Itoa(*v)
	case *string:
		return k.Name + " " + *v
	}
	return ""
}

// Check checks what can be checked without reading the system: at most
// one kind is set, its value is well formed, and the exec-only fields go
// with exec. The errors are at the fields' paths (target.pid, ...).
func (s *Spec) Check() field.Errors {
	var es field.Errors
	set := s.SetKinds()
	if len(set) > 1 {
		es.Add("target."+set[1].Name, "set only one of %s (also set: {target.%s})", KindFlags("or"), set[0].Name)
	}
	for _, k := range set {
		if k.check == nil {
			continue
		}
		if fe := field.As(k.check(s)); fe != nil {
			es = append(es, fe...)
		}
	}
	if s.Exec == "" {
		if s.ExecLog != "" {
			es.Add("target.exec_log", "only with {target.exec}")
		}
		if s.ExecShow {
			es.Add("target.exec_show", "only with {target.exec}")
		}
	}
	return es
}
