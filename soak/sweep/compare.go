package sweep

import (
	"fmt"
	"strings"
)

// Compare says in a sentence or two how sweep cur differs from the
// earlier sweep prev of the same job: where the knee went and why, and
// the throughput at the levels both measured.
func Compare(prev, cur *Report) string {
	if prev == nil || cur == nil {
		return ""
	}
	var parts []string
	pk, ck := prev.Knee, cur.Knee
	switch {
	case pk.Concurrency == ck.Concurrency && pk.Cause == ck.Cause:
		parts = append(parts, fmt.Sprintf("the knee is where it was (%s)", kneeWords(ck)))
	default:
		parts = append(parts, fmt.Sprintf("the knee moved from %s to %s", kneeWords(pk), kneeWords(ck)))
	}
	byN := map[int]Level{}
	for _, l := range prev.Levels {
		byN[l.Concurrency] = l
	}
	var worst, best *struct {
		n int
		d float64
	}
	for _, l := range cur.Levels {
		p, ok := byN[l.Concurrency]
		if !ok || p.Throughput <= 0 {
			continue
		}
		d := l.Throughput/p.Throughput - 1
		if worst == nil || d < worst.d {
			worst = &struct {
				n int
				d float64
			}{l.Concurrency, d}
		}
		if best == nil || d > best.d {
			best = &struct {
				n int
				d float64
			}{l.Concurrency, d}
		}
	}
	if worst != nil {
		parts = append(parts, fmt.Sprintf("throughput changed by %+.0f %% at %d clients (the most down) and %+.0f %% at %d (the most up)", 100*worst.d, worst.n, 100*best.d, best.n))
	}
	return strings.Join(parts, "; ")
}

func kneeWords(k Knee) string {
	if k.Concurrency == 0 {
		return "none (" + k.Cause + ")"
	}
	return fmt.Sprintf("%d clients (%s)", k.Concurrency, k.Cause)
}
