package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/soakd/soakd/soak/runner"
)

// Suggestion is the soak the sweep proposes: the knee's level (the last
// that scaled), and an open-loop rate at rateShare of the throughput
// measured there, so at or under the knee's concurrency and throughput.
type Suggestion struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Command     string  `json:"command"`
	Reason      string  `json:"reason"`
}

// rateShare of a level's throughput leaves the target headroom for a long
// soak.
const rateShare = 0.8

// soakDuration is the suggested soak's length.
const soakDuration = "1h"

// suggest picks the knee's level (the top level when there is none): the
// most clients the target still served in proportion, at a rate under
// what it served there.
func suggest(ls []Level, k Knee, o runner.Options) Suggestion {
	if len(ls) == 0 {
		return Suggestion{}
	}
	i := len(ls) - 1
	why := "the highest level, as no knee was found"
	if k.Concurrency > 0 {
		for j, l := range ls {
			if l.Concurrency == k.Concurrency {
				i, why = j, fmt.Sprintf("the knee's level (%s)", k.Cause)
			}
		}
	}
	l := ls[i]
	s := Suggestion{Concurrency: l.Concurrency, Rate: round2(rateShare * l.Throughput)}
	s.Reason = fmt.Sprintf("%d clients, %s; a rate of %.0f %% of the %.4g req/s measured there", l.Concurrency, why, 100*rateShare, l.Throughput)
	s.Command = command(s, o)
	return s
}

// command is the `soakd run` line of the suggestion, with the sweep's
// target and request.
func command(s Suggestion, o runner.Options) string {
	args := []string{"soakd", "run", "-c", strconv.Itoa(s.Concurrency)}
	if s.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(s.Rate, 'g', -1, 64))
	}
	args = append(args, "-d", soakDuration)
	t := o.Target
	for _, f := range []struct{ name, v string }{
		{"--pidfile", t.PIDFile}, {"--match", t.Match}, {"--unit", t.Unit}, {"--exec", t.Exec},
	} {
		if f.v != "" {
			args = append(args, f.name, shellQuote(f.v))
		}
	}
	if t.PID > 0 && t.Exec == "" {
		args = append(args, "--pid", strconv.Itoa(t.PID))
	}
	if o.NoProbe {
		args = append(args, "--no-probe")
	}
	if m := o.Load.Endpoints[0].Method; m != "" && m != "GET" {
		args = append(args, "-m", m)
	}
	return strings.Join(append(args, shellQuote(o.Load.Endpoints[0].URL)), " ")
}

// round2 keeps two significant digits.
func round2(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-1)
	return math.Round(v/p) * p
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
