package analysis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/model"
)

// TestCPUCostRealCleanRuns judges the cost series of real soaks of the
// zoo's clean servers on a busy machine (testdata/cpucost, kept by
// bench/cpu-false.sh; see testdata/cpucost/README.md): none may read a
// CPU leak. Their costs moved by up to +98 % over the soak with no leak.
func TestCPUCostRealCleanRuns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "cpucost", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/cpucost/*.csv: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := model.ReadCSV(f)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			ao := analysis.Options{CPUs: 2}
			if strings.Contains(path, "-closed-") {
				ao.Concurrency = 1
			}
			_, c := analysis.Analyze(recs, nil, ao)
			d := c.Cost
			t.Logf("%d windows along %s, %+.0f %%, p = %.2g (%.2g as independent), inflation %.1f: %s", d.Windows, d.Axis, 100*d.Change, d.PValue, d.NaivePValue, d.WanderInflation, d.Reason)
			if d.Rising {
				t.Errorf("a clean server read a CPU leak: %s", d.Reason)
			}
		})
	}
}
