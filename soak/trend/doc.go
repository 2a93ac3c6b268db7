// Package trend holds the robust trend statistics behind soakd's verdicts:
// the Theil–Sen slope with Sen's (1968) confidence interval, the
// Mann–Kendall trend test with tie-corrected variance, ordinary least
// squares, and binning helpers that reduce a long series to a few hundred
// points (by minimum for a lower envelope, or by median).
//
// It is pure and uses the standard library only. Mann–Kendall runs in
// O(n log n); the exact Theil–Sen estimator is O(n² log n) and is meant for
// binned series of at most a few thousand points: bin first (Bin) when the
// raw series is longer.
package trend
