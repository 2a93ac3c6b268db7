//go:build race

package study

// raceBuild: the study is pure arithmetic with no goroutines, and the race
// detector makes it ten times slower; under -race it runs a small sample
// that checks it still works, and the README's test command runs it whole
// without -race.
const raceBuild = true
