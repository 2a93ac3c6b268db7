//go:build race

package verdict

// raceBuild: the simulation sweeps below are pure arithmetic, and the race
// detector makes them about ten times slower; under -race they run a
// tenth of their series and check only that they still run, and the
// README's test command runs them whole without -race (as soak/verdict/study).
const raceBuild = true
