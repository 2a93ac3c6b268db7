package field

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// An error about a setting keeps its path and cause through wrapping, and
// each front end words the settings it names its own way.
func TestErrorsKeepTheirPathThroughWrapping(t *testing.T) {
	err := fmt.Errorf("opening the target: %w", Errorf("target.pidfile", "%s: %w; or set {target.pid}", "/run/x.pid", fs.ErrNotExist))
	es := As(err)
	if len(es) != 1 || es[0].Path != "target.pidfile" {
		t.Fatalf("As = %v; want one error at target.pidfile", es)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cause is lost: %v", err)
	}
	flag := es[0].Text(func(p string) string { return "--" + strings.TrimPrefix(p, "target.") })
	if want := "/run/x.pid: file does not exist; or set --pid"; flag != want {
		t.Errorf("worded as flags: %q; want %q", flag, want)
	}
	if got, want := err.Error(), "opening the target: target.pidfile: /run/x.pid: file does not exist; or set target.pid"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
	var list Errors
	list.Add("load.rate", "must be >= 0, got %g", -5.0)
	list.Add("load", "set {load.duration} or {load.requests}")
	if got := As(list.Err()); len(got) != 2 || got[1].Path != "load" {
		t.Errorf("As(list) = %v; want both", got)
	}
	if (Errors{}).Err() != nil || As(errors.New("plain")) != nil {
		t.Errorf("an empty list or a plain error holds field errors")
	}
}

// A placeholder the user writes ({pid}) is no setting's path: only
// {section.key} is worded by the front end.
func TestPlaceholdersAreText(t *testing.T) {
	e := Error{Path: "where.snapshot_cmd", Msg: `"date": must hold {pid}, the target's PID; or set {target.pid}`}
	got := e.Text(func(p string) string { return "--" + strings.TrimPrefix(p, "target.") })
	if want := `"date": must hold {pid}, the target's PID; or set --pid`; got != want {
		t.Errorf("Text = %q; want %q", got, want)
	}
}
