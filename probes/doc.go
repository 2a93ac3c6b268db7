// Package probes finds the target server and samples its whole process
// tree: Open resolves a Spec to a Target (a PID, a pidfile, a command-line
// regexp, a systemd unit's cgroup, a command soakd starts, or by default
// the owner of the URL's listening port), and a Sampler turns it into one
// Sample per call.
//
// # Identity and incarnations
//
// A process is {PID, start time}; a reused PID is never the same process.
// The root is resolved again on every sample (pidfile and unit every time;
// match and port-owner targets only once the root is gone), and each new
// root identity is a new incarnation. Cumulative counters (CPU, context
// switches, I/O) are summed over the tree per process identity and kept
// monotonic: processes that exit keep their last value in the totals.
//
// # Cost
//
// Everything is read from /proc with raw syscalls into reused buffers; no
// call forks. Figures from `go test -run '^$' -bench Sample -benchtime
// 2000x -count 3 ./probes` on the shared 2-core machine (load average about
// 10), CPU time of soakd per sample:
//
//	one process                       90–120 µs  (budget 200 µs)
//	50-process tree (Go processes)   1.9–2.1 ms  (budget 3 ms)
//	one process, smaps_rollup too    205–220 µs  (every SmapsInterval, 30 s)
//	one process, TCP census          520–600 µs  (every SocketInterval, 5 s)
//	50-process tree, TCP census      4.2–4.6 ms
//	one process, 1000 fds, census      4–7 ms    (a readlink per fd)
//
// With a 1 s sample interval and the default cadences that averages about
// 0.2 ms per sample for one process and 2.5 ms for 50.
//
// What made it cheap, measured:
//
//   - /proc/net/tcp and tcp6 walk the whole kernel TCP hash table: about
//     3.5 ms of CPU per table here even when empty. A sock_diag netlink dump
//     (the legacy TCPDIAG_GETSOCK request walks once for both families)
//     takes about 0.3 ms; it is used when the root shares soakd's network
//     namespace, the root's /proc/PID/net/tcp{,6} otherwise.
//   - Which socket an fd is needs a readlink per fd. That is only done for
//     the census; the fd count alone is the size of /proc/PID/fd (one stat,
//     Linux 6.2+; a directory listing on older kernels).
//   - This kernel has no /proc/PID/task/TID/children, so the tree comes
//     from the ppid in each /proc/PID/stat. PIDs found outside the tree are
//     remembered (a non-descendant can never become one), and the /proc
//     listing is skipped altogether while the last PID in /proc/loadavg has
//     not moved. A full walk of ~150 processes costs about 5 ms.
//   - /proc/PID/status gives the main thread's context switches only; the
//     other threads' (a read per thread, two thirds of a Go tree's cost)
//     are read every second, each thread a counter identity of its own.
//   - stat gives RSS and VMS (the same numbers as statm) with CPU, threads,
//     ppid and start time in one read; limits is read once per root and
//     again every SmapsInterval.
//
// # Permissions
//
// Another user's /proc/PID/fd, io and smaps_rollup need that user or
// CAP_SYS_PTRACE. Sampling goes on without them: one warning is logged per
// kind and the Sample's FDsValid, IOValid, SmapsValid or TCPValid says what
// is missing. Only the port-owner lookup fails Open, since it cannot find
// the target without reading fds.
package probes
