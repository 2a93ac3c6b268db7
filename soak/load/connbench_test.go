package load

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRoundTripNewConnLoops is one request on a connection of its
// own, 4 in flight on the event loops (useLoopIO): the per-connection
// path's cost, where Engine.EachConn's bookkeeping sits.
func BenchmarkRoundTripNewConnLoops(b *testing.B) {
	url := rawServer(b, serveStatic(static512))
	e, err := New(Options{Endpoints: endpoints(url), Requests: uint64(b.N), Concurrency: 4, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s, err := e.Run(context.Background())
	if err != nil || s.Errors != 0 {
		b.Fatalf("got %v, errors %v", err, s.ErrorsByCause)
	}
}
