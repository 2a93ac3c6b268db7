// Package sites takes allocation-site snapshots of a soak's target at the
// soak's start and end and reports what grew between them:
//
//   - Go targets that serve net/http/pprof: heap profiles, diffed on
//     inuse_space and inuse_objects with github.com/google/pprof/profile,
//     grouped by the allocating function and line;
//   - JVM targets, where jcmd is on PATH and may attach: the class
//     histograms of GC.class_histogram;
//   - any target: the output of a user's command (--snapshot-cmd), kept
//     as evidence only.
//
// Every snapshot's raw bytes go to an Evidence, bounded in size, which the
// runner stores beside the report.
package sites
