package probes

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/internal/soaktest"
)

// TestSmapsPartsIgnoreOtherInstances: the parts of PSS and USS that soakd
// judges do not move when other processes that map the same files exit.
// A target shares its program's text with three other instances of the
// same binary, outside its tree; when they exit, its PSS takes their
// shares of the text and its USS the pages now mapped once, while its
// anonymous and shared memory's PSS and its dirty pages stay where they
// were. Both readings are checked: smaps_rollup and the full smaps.
func TestSmapsPartsIgnoreOtherInstances(t *testing.T) {
	for _, mappings := range []bool{false, true} {
		t.Run(fmt.Sprintf("mappings=%v", mappings), func(t *testing.T) {
			bin := soaktest.OwnCopy(t, soaktest.Binary(t, soaktest.Target))
			target := soaktest.StartServer(t, bin, "--max-lifetime", "5m")
			var others []*soaktest.Server
			for range 3 {
				others = append(others, soaktest.StartServer(t, bin, "--max-lifetime", "5m"))
			}
			// Requests touch the text that serves them, in every instance.
			for _, s := range append([]*soaktest.Server{target}, others...) {
				for range 50 {
					resp, err := http.Get(s.URL)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
			}
			read := func() Sample {
				s := NewSampler(openLive(t, Spec{PID: target.PID}), SamplerOptions{Mappings: mappings, SmapsInterval: time.Nanosecond, Log: zap.NewNop()})
				smp := s.Sample()
				if !smp.SmapsValid || !smp.PSSAnonValid || !smp.USSDirtyValid {
					t.Fatalf("no smaps reading: %+v", smp)
				}
				return smp
			}
			before := read()
			for _, o := range others {
				if err := syscall.Kill(o.PID, syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				<-o.Done
			}
			after := read()
			mib := func(a, b uint64) float64 { return (float64(b) - float64(a)) / (1 << 20) }
			t.Logf("PSS %+.2f MiB, USS %+.2f MiB; PSS anon+shmem %+.2f MiB, USS dirty %+.2f MiB",
				mib(before.PSS, after.PSS), mib(before.USS, after.USS), mib(before.PSSAnon, after.PSSAnon), mib(before.USSDirty, after.USSDirty))
			// The wholes must move, or this test shows nothing: the text a
			// Go server runs is some MiB, a quarter of it counted before.
			if d := mib(before.PSS, after.PSS); d < 1 {
				t.Errorf("PSS moved %+.2f MiB when three other instances exited; want ≥ 1 MiB (the test's premise)", d)
			}
			if d := mib(before.USS, after.USS); d < 1 {
				t.Errorf("USS moved %+.2f MiB when three other instances exited; want ≥ 1 MiB (the test's premise)", d)
			}
			// The parts may move by what the idle target's runtime does
			// meanwhile (a GC, the scavenger): well under the wholes' move.
			for _, p := range []struct {
				name          string
				before, after uint64
			}{{"PSS anon+shmem", before.PSSAnon, after.PSSAnon}, {"USS dirty", before.USSDirty, after.USSDirty}} {
				if d := mib(p.before, p.after); d > 0.25 || d < -0.25 {
					t.Errorf("%s moved %+.2f MiB when other instances exited; want within ±0.25 MiB", p.name, d)
				}
			}
		})
	}
}
