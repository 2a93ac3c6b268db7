//go:build race

package abrun

// raceBuild: the simulation is arithmetic with no goroutines, and the race
// detector makes it about ten times slower; under -race it runs a few
// seeds that check it still works, plain `go test` runs 50, and
// bench/ab-study.sh 1000.
const raceBuild = true
