// Command verdict-study prints the simulation study behind soakd's
// verdicts: for every synthetic model, the share of leak verdicts, the
// 95 % interval's coverage of the true slope, and detection of leaks that
// matter. The study's tests (soak/verdict/study) assert the thresholds;
// this prints the whole table, e.g. for docs/verdict-study.md:
//
//	go run ./cmd/verdict-study -n 500
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/soakd/soakd/soak/verdict/study"
)

func main() {
	n := flag.Int("n", 300, "series per model")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "verdict-study: -n must be at least 1")
		os.Exit(2)
	}
	study.Table(os.Stdout, *n, *seed)
}
