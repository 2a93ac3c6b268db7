package load

import "testing"

// BenchmarkRoundTripNewConnLoops is one request on a connection of its
// own, 4 in flight on the event loops (useLoopIO): the per-connection
// path's cost, where Engine.EachConn's bookkeeping sits.
func BenchmarkRoundTripNewConnLoops(b *testing.B) {
	benchEngine(b, Options{Concurrency: 4})
}
