package soaktest

import (
	"flag"
	"testing"
)

// Parallel sets -test.parallel only when the command line left it unset.
func TestParallel(t *testing.T) {
	f := flag.Lookup("test.parallel")
	if f == nil {
		t.Fatal("no -test.parallel flag: the testing package's flags are not registered")
	}
	before := f.Value.String()
	t.Cleanup(func() { flag.Set("test.parallel", before) })
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	Parallel(7)
	want := "7"
	if set {
		want = before // go test -parallel N: the command line wins
	}
	if got := f.Value.String(); got != want {
		t.Errorf("-test.parallel = %s after Parallel(7) (set on the command line: %v, was %s); want %s", got, set, before, want)
	}
}
