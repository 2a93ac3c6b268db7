package runner

import (
	"testing"
	"time"
)

// TestSmapsPaceSuitsTheRun: PSS/USS are read about 30 times over a
// duration-bounded load, 2 s to 30 s apart, so a 6-minute run has enough of
// them to decide.
func TestSmapsPaceSuitsTheRun(t *testing.T) {
	for _, c := range []struct{ d, want time.Duration }{
		{0, 30 * time.Second}, {10 * time.Second, 2 * time.Second}, {2 * time.Minute, 4 * time.Second},
		{6 * time.Minute, 12 * time.Second}, {2 * time.Hour, 30 * time.Second},
	} {
		if got := SmapsPace(c.d); got != c.want {
			t.Errorf("SmapsPace(%s) = %s; want %s", c.d, got, c.want)
		}
	}
	o := Options{}
	o.Load.Duration = 6 * time.Minute
	if o.setDefaults(); o.Sampler.SmapsInterval != 12*time.Second {
		t.Errorf("setDefaults: smaps interval %s; want 12s", o.Sampler.SmapsInterval)
	}
	o = Options{}
	o.Sampler.SmapsInterval = 5 * time.Second
	if o.setDefaults(); o.Sampler.SmapsInterval != 5*time.Second {
		t.Errorf("setDefaults changed an explicit smaps interval: %s", o.Sampler.SmapsInterval)
	}
}
