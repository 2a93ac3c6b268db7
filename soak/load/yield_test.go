package load

import (
	"testing"
	"time"
)

// The yielder passes through the scheduler once per yieldEvery, not on
// every call.
func TestYielderYieldsOncePerPeriod(t *testing.T) {
	var y yielder
	for _, tc := range []struct {
		now, last time.Duration
	}{
		{time.Millisecond, 0},
		{yieldEvery, yieldEvery},
		{2*yieldEvery - time.Microsecond, yieldEvery},
		{2 * yieldEvery, 2 * yieldEvery},
		{5 * yieldEvery, 5 * yieldEvery},
	} {
		y.maybe(tc.now)
		if y.last != tc.last {
			t.Errorf("after maybe(%s): last yield at %s; want %s", tc.now, y.last, tc.last)
		}
	}
}
