//go:build race

package analysis_test

// raceBuild: TestCostFloorStudy is pure arithmetic over 4 200 seeded
// series, and the race detector made it take 204 s of the race step on a
// busy machine; under -race it runs a tenth of its seeds and asserts
// nothing of their rates, and the README's test command runs it whole
// without -race (as soak/verdict's sweeps and soak/verdict/study).
const raceBuild = true
