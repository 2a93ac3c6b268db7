package verdict

import (
	"math"
	"strings"
	"testing"
)

func TestNewSchedule(t *testing.T) {
	for _, c := range []struct {
		name  string
		first float64
		looks int
	}{
		{"35 s at most: one look, the end", 30.0 / 35, 1},
		{"45 s: at 30 s and the end", 30.0 / 45, 2},
		{"just over 1.25× the first", 1 / 1.3, 2},
		{"10 min", 30.0 / 600, 14},
		{"8 h", 30.0 / 28800, 31},
		{"no first", 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewSchedule(c.first, 0)
			if s.Looks() != c.looks {
				t.Fatalf("got %d looks %v; want %d", s.Looks(), s.At, c.looks)
			}
			if s.At[len(s.At)-1] != 1 {
				t.Errorf("last look at %g; want 1 (the end)", s.At[len(s.At)-1])
			}
			if c.first > 0 && s.Looks() > 1 && math.Abs(s.At[0]-c.first) > 1e-12 {
				t.Errorf("first look at %g; want %g", s.At[0], c.first)
			}
			sum := 0.0
			for k := range s.At {
				if k > 0 && s.At[k] < LookRatio*s.At[k-1]*(1-1e-12) {
					t.Errorf("look %d at %g is under %g× look %d at %g", k, s.At[k], LookRatio, k-1, s.At[k-1])
				}
				sum += s.Share(k)
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("shares sum to %g; want 1", sum)
			}
		})
	}
}

func TestScheduleDue(t *testing.T) {
	s := NewSchedule(0.1, 0)
	if s.Due(0, 0.09) || !s.Due(0, 0.1) || !s.Due(s.Looks()-1, 1) || s.Due(s.Looks(), 2) {
		t.Errorf("Due wrong on %v", s.At)
	}
}

func TestThresholdsSpent(t *testing.T) {
	th := MemoryThresholds.Spent(0.1)
	if math.Abs(th.Alpha-0.0001) > 1e-15 || math.Abs(th.Level-0.995) > 1e-12 {
		t.Errorf("got alpha %g, level %g; want 0.0001, 0.995", th.Alpha, th.Level)
	}
	if got := MemoryThresholds.Spent(1); got != MemoryThresholds {
		t.Errorf("a share of 1 changed the thresholds: %+v", got)
	}
	if got := (Thresholds{}).Spent(0.5); got.Alpha != 0.0005 || got.Level != 0.975 {
		t.Errorf("zero thresholds at half: alpha %g level %g; want 0.0005, 0.975", got.Alpha, got.Level)
	}
}

// TestLevelWidensTheWholeInterval: a look at a spent level reads a wider
// whole-soak interval, reports its level, and takes the slope's p-value
// from that interval: p < (1 − level)/2 exactly when it lies above 0
// (before issue 41 p stayed the 95 % interval's, and could disagree).
func TestLevelWidensTheWholeInterval(t *testing.T) {
	pts := make([]Point, 0, 200)
	for i := range 200 {
		v := 100e6 + 50*float64(i*100) + 300e3*math.Sin(float64(i))
		pts = append(pts, Point{Requests: float64(i * 100), Seconds: float64(i), Value: v, Phase: Soak})
	}
	opt := ResourceOptions{Name: "rss", Unit: "bytes"}
	a := AnalyzeResource(pts, opt)
	opt.Thresholds = MemoryThresholds.Spent(0.01)
	b := AnalyzeResource(pts, opt)
	if !(b.CI95[1]-b.CI95[0] > a.CI95[1]-a.CI95[0]) {
		t.Errorf("interval at 99.95 %% %v is not wider than at 95 %% %v", b.CI95, a.CI95)
	}
	if a.Level != 0 || math.Abs(b.Level-0.9995) > 1e-12 {
		t.Errorf("levels %g, %g; want 0 (95 %%) and 0.9995", a.Level, b.Level)
	}
	if !strings.Contains(b.Reason, "(99.95 % CI ") || strings.Contains(b.Reason, "(95 % CI ") {
		t.Errorf("reason %q; want the interval worded at 99.95 %%", b.Reason)
	}
	if (a.PValue < 0.025) != (a.CI95[0] > 0) || (b.PValue < (1-b.Level)/2) != (b.CI95[0] > 0) {
		t.Errorf("p-values %g beside 95 %% CI %v and %g beside %g %% CI %v; want each under (1 − level)/2 exactly when its interval lies above 0",
			a.PValue, a.CI95, b.PValue, 100*b.Level, b.CI95)
	}
}
