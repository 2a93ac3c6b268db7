//go:build race

package daemon

// raceBuild: the cross-run study is arithmetic with no goroutines, and the
// race detector makes it about ten times slower; under -race it runs a few
// seeds that check it still works, and the README's test command runs it
// whole without -race.
const raceBuild = true
