//go:build race

package sweep_test

// raceEnabled: the tests run under the race detector, which slows soakd's
// own load engine several times over.
const raceEnabled = true
