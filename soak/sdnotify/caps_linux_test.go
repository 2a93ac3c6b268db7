package sdnotify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDropAmbientCaps runs a cgo-free helper with CAP_SYS_PTRACE and
// CAP_DAC_READ_SEARCH as ambient capabilities (as the unit grants them)
// and checks that its child inherits none while it keeps them.
func TestDropAmbientCaps(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv to grant ambient capabilities")
	}
	bin := filepath.Join(t.TempDir(), "dropcaps")
	build := exec.Command("go", "build", "-o", bin, "./testdata/dropcaps")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build helper: %v\n%s", err, out)
	}
	caps := "-all,+sys_ptrace,+dac_read_search"
	out, err := exec.Command(setpriv, "--reuid=4242", "--regid=4242", "--clear-groups",
		"--inh-caps="+caps, "--ambient-caps="+caps, "--bounding-set="+caps, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	// CAP_DAC_READ_SEARCH is bit 2, CAP_SYS_PTRACE bit 19: 0x80004.
	for _, want := range []string{"child CapAmb:\t0000000000000000", "self CapEff:\t0000000000080004"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("got %q; want a line %q", out, want)
		}
	}
}

// Without ambient capabilities there is nothing to clear, whatever the
// build: no error (and so no warning at every start of a cgo build).
func TestDropAmbientCapsWithNoneIsQuiet(t *testing.T) {
	amb, err := ambientCaps()
	if err != nil {
		t.Fatal(err)
	}
	if amb != 0 {
		t.Skipf("this test process has ambient capabilities %#x", amb)
	}
	if err := DropAmbientCaps(); err != nil {
		t.Errorf("DropAmbientCaps with none = %v; want nil", err)
	}
}
