package model

import (
	"bytes"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestNoLimit: a memory leak with no limit is not "never" exhausted: the
// report says there is no memory limit and when the host's RAM fills.
func TestNoLimit(t *testing.T) {
	tte := 3600.0
	leak := verdict.Resource{Verdict: verdict.Leak, Unit: "bytes", PerHour: 2.7 * (1 << 30), End: 1 << 30}
	cases := []struct {
		name string
		res  verdict.Resource
		ram  uint64
		want string
	}{
		{"no limit, host RAM known", leak, 16 << 30, "no memory limit; at this rate it fills the host's RAM (16 GiB) in about 5.6 h"},
		{"no limit, host RAM unknown", leak, 0, "no memory limit"},
		{"a limit", func() verdict.Resource { r := leak; r.Limit, r.TimeToExhaustionSeconds = 4<<30, &tte; return r }(), 16 << 30, ""},
		{"not a leak", verdict.Resource{Verdict: verdict.Stable, Unit: "bytes"}, 16 << 30, ""},
		{"fds", verdict.Resource{Verdict: verdict.Leak, Unit: "fds", PerHour: 10}, 16 << 30, ""},
	}
	for _, c := range cases {
		if got := NoLimit(c.res, c.ram); got != c.want {
			t.Errorf("%s: NoLimit = %q; want %q", c.name, got, c.want)
		}
	}
	rep := &Report{Verdict: verdict.OverallLeak, Resources: map[string]verdict.Resource{"rss": leak},
		Target: TargetInfo{HostMemoryBytes: 16 << 30}}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "  rss has no memory limit; at this rate it fills the host's RAM (16 GiB) in about 5.6 h\n"; !strings.Contains(b.String(), want) {
		t.Errorf("report text:\n%s\nwant the line %q", b.String(), want)
	}
}
