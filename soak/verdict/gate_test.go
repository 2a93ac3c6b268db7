package verdict

import "testing"

func TestGate(t *testing.T) {
	g := NewGate(3, 60)
	looks := []struct {
		leak, want bool
	}{
		{true, false}, {true, false}, {false, false}, // a streak broken
		{true, false}, {true, false}, {true, true}, // three in a row fire
		{false, true}, {true, true}, {false, true}, {false, true}, {false, false}, // three clear ones resolve
	}
	for i, l := range looks {
		if got := g.Look("rss", l.leak, 3600); got != l.want {
			t.Errorf("look %d (leak %v): got firing %v; want %v", i, l.leak, got, l.want)
		}
	}
	if g.Look("fds", true, 3600) {
		t.Errorf("a new resource fired on its first look; want it to wait for 3")
	}
	early := NewGate(1, 60)
	if early.Look("rss", true, 59) || !early.Look("rss", true, 60) {
		t.Errorf("a look before MinSoak counted; want only looks from 60 s of soak on")
	}
	if d := NewGate(0, 0); d.Need != DefaultGateLooks || d.MinSoak != DefaultGateMinSoak {
		t.Errorf("NewGate(0, 0) = %+v; want the defaults", d)
	}
}
