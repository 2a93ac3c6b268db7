package sweep

import (
	"fmt"
	"time"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/runner"
)

// Spec is a sweep's ladder as a config file writes it (a daemon job of
// kind sweep); the target, the request and the thresholds are the job's
// runner.Spec.
type Spec struct {
	Levels        []int         `yaml:"levels"`
	LevelDuration time.Duration `yaml:"level_duration"`
	LevelRequests uint64        `yaml:"level_requests"`
	LevelWarmup   time.Duration `yaml:"level_warmup"` // 0: a tenth of the level, 300ms to 3s; negative: none
	// PastKnee climbs the whole ladder instead of stopping past a
	// confirmed knee once throughput fell.
	PastKnee bool `yaml:"past_knee"`
}

// DefaultSpec is the ladder of `soakd sweep` without flags.
func DefaultSpec() Spec {
	return Spec{Levels: append([]int(nil), DefaultLevels...), LevelDuration: DefaultLevelDuration}
}

// Check validates the ladder; paths are under "sweep".
func (s *Spec) Check() field.Errors {
	var es field.Errors
	if len(s.Levels) == 0 {
		es.Add("sweep.levels", "give at least one concurrency, e.g. [1, 2, 5, 10]")
	}
	for i, n := range s.Levels {
		if n < 1 || i > 0 && n <= s.Levels[i-1] {
			es.Add(fmt.Sprintf("sweep.levels[%d]", i), "want rising concurrencies >= 1, got %v", s.Levels)
			break
		}
	}
	if s.LevelRequests == 0 && s.LevelDuration <= 0 {
		es.Add("sweep.level_duration", "must be > 0, got %s (or set {sweep.level_requests})", s.LevelDuration)
	}
	return es
}

// Budget is the longest the ladder may take: every level with its
// warm-up, and a margin per level for the preflight and the target's
// sampling to start.
func (s *Spec) Budget() time.Duration {
	per := s.LevelDuration + min(s.LevelDuration/10, 3*time.Second) + 10*time.Second
	if s.LevelRequests > 0 && s.LevelDuration <= 0 {
		per = 10 * time.Minute // bounded by requests only: a generous cap
	}
	return time.Duration(len(s.Levels)) * per
}

// Options makes a sweep's options from the ladder and the run's spec (its
// load bounds are the ladder's, so they are set here to pass its checks).
func (s *Spec) Options(run runner.Spec) (Options, error) {
	if err := s.Check().Err(); err != nil {
		return Options{}, err
	}
	run.Load.Duration, run.Load.Requests = s.LevelDuration, s.LevelRequests
	ro, err := run.Options()
	if err != nil {
		return Options{}, err
	}
	return Options{Run: ro, Levels: s.Levels, LevelDuration: s.LevelDuration,
		LevelRequests: s.LevelRequests, LevelWarmup: s.LevelWarmup, PastKnee: s.PastKnee}, nil
}
