package web

import (
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// TestNumbersHaveUnitsAndNoExponent: figures print with their unit, three
// significant digits, no scientific notation, one unit per interval, and
// no "-0".
func TestNumbersHaveUnitsAndNoExponent(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{units.Amount(5.3e3*(1<<20), "bytes"), "5.18 GiB"},
		{units.Amount(1020, "bytes"), "1020 B"},
		{units.Amount(101.4, "bytes"), "101 B"},
		{units.Amount(0.0123, "fds"), "0.0123 fds"},
		{units.Amount(-0.0001, "bytes"), "-0.0001 B"},
		{units.Amount(4096, "bytes"), "4 KiB"},
		{units.Amount(123456, "threads"), "123456 threads"},
		{units.Range(1020, 1024, "bytes"), "0.996 – 1 KiB"},
		{units.Range(-3, 200, "bytes"), "-3 – 200 B"},
		{percent(-0.001), "0 %"},
		{percent(0.456), "46 %"},
		{units.Sig3(-0.0004), "-0.0004"},
		{units.Sig3(-0.00000000000001), "0"},
	} {
		if c.got != c.want {
			t.Errorf("got %q; want %q", c.got, c.want)
		}
	}
}

// TestLatencySkipsIdlePhases: the latency chart takes no point from the
// baseline or the cool-down, which only repeat the last interval.
func TestLatencySkipsIdlePhases(t *testing.T) {
	rec := func(p verdict.Phase) model.Record {
		return model.Record{Phase: p, P50: 0.002, P99: 0.01, Rate: 100}
	}
	for _, c := range []struct {
		phase verdict.Phase
		want  bool
	}{{verdict.Baseline, false}, {verdict.Warmup, true}, {verdict.Soak, true}, {verdict.Cooldown, false}} {
		if _, ok := p50Value(rec(c.phase)); ok != c.want {
			t.Errorf("p50 of a %s record: plotted %v; want %v", model.PhaseName(c.phase), ok, c.want)
		}
		if _, ok := p99Value(rec(c.phase)); ok != c.want {
			t.Errorf("p99 of a %s record: plotted %v; want %v", model.PhaseName(c.phase), ok, c.want)
		}
	}
}

// TestRemoteAbsentAndNotesShown: a report sampled through a remote source
// lists what the source cannot see, and its notes, on the run page as in
// the text report.
func TestRemoteAbsentAndNotesShown(t *testing.T) {
	rep := &model.Report{Verdict: "clean", Resources: map[string]verdict.Resource{"rss": {Verdict: "stable", Unit: "bytes"}},
		Target: model.TargetInfo{Probed: true, Remote: &model.RemoteInfo{
			Absent: map[string]string{"fds": "the endpoint exports no process_open_fds"},
			Notes:  []string{"scrape failed at 02:00:01: connection refused"}}}}
	var b strings.Builder
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<th scope=\"row\">fds</th>", "ABSENT", "the endpoint exports no process_open_fds",
		"Source note: scrape failed at 02:00:01: connection refused"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
}
