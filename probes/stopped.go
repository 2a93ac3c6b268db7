package probes

// isStopped says whether a stat state (field 3 of /proc/PID/stat) is
// stopped: T by a signal (SIGSTOP, SIGTSTP), t by a tracer. A stopped
// process is alive and keeps its sockets, so it is never taken for gone.
func isStopped(state byte) bool { return state == 'T' || state == 't' }
