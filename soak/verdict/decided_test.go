package verdict

import (
	"strings"
	"testing"
)

func TestConfirm(t *testing.T) {
	c := &Confirm{}
	looks := []struct {
		parts map[string]string
		want  bool
	}{
		{map[string]string{"rss": Stable, "fds": ""}, false},
		{map[string]string{"rss": Stable, "fds": Stable}, false},
		{map[string]string{"rss": Stable, "fds": Stable}, false},
		{map[string]string{"rss": Stable, "fds": Leak}, false}, // a change starts the count again
		{map[string]string{"rss": Stable, "fds": Leak}, false},
		{map[string]string{"rss": Stable, "fds": Leak}, true},
	}
	for i, l := range looks {
		if got := c.Look(l.parts); got != l.want {
			t.Errorf("look %d: got %v; want %v", i, got, l.want)
		}
	}
}

func TestCPUDecided(t *testing.T) {
	cost := CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-5, 1e-5}}
	for _, c := range []struct {
		name    string
		cpu     CPU
		answer  string
		missing string
	}{
		{"io, flat cost", CPU{Bound: BoundIO, Cost: cost}, "io, not rising", ""},
		{"between the bars is an answer", CPU{Bound: BoundInconclusive, Evidence: EvidenceRequestShare, Cost: cost}, "between, not rising", ""},
		{"starved is no answer", CPU{Bound: BoundInconclusive, Evidence: EvidenceStarved, Reason: "inconclusive: starved: …", Cost: cost}, "", "starved of CPU by other work"},
		{"missing figures", CPU{Bound: BoundInconclusive, Evidence: EvidenceMissing, Reason: "no CPU"}, "", "missing"},
		{"rising", CPU{Bound: BoundCPU, Cost: CostDrift{Windows: 10, Rising: true}}, "cpu, rising", ""},
		{"contention", CPU{Bound: BoundCPU, Cost: CostDrift{Windows: 10, Inconclusive: true,
			Reason: "CPU per request inconclusive: it rose +40 % while …; cannot tell a leak from the machine's contention"}}, "", "contention"},
		{"few windows", CPU{Bound: BoundIO, Cost: CostDrift{Windows: 3}}, "", "windows"},
		{"wide cost", CPU{Bound: BoundIO, Cost: CostDrift{Windows: 10, Start: 1e-4, CI95: [2]float64{-1e-3, 1e-3}}}, "", "not yet proven"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, m := CPUDecided(c.cpu, 3600)
			if a != c.answer || (c.missing == "") != (m == "") || !strings.Contains(m, c.missing) {
				t.Errorf("got %q, %q; want %q, a text with %q", a, m, c.answer, c.missing)
			}
		})
	}
}
