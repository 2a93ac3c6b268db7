// Command gen records the soak/web test fixture: a short real run against
// the demo target leaking bytes and fds. Run from the module root:
//
//	go build -o /tmp/x/target ./testdata/target
//	go run ./soak/web/testdata/gen -target /tmp/x/target -out soak/web/testdata/run1
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/runner"
)

func main() {
	target := flag.String("target", "/tmp/x/target", "demo target binary")
	out := flag.String("out", "soak/web/testdata/run1", "output directory")
	dur := flag.Duration("duration", 60*time.Second, "load duration")
	leak := flag.String("leak-bytes", "2048", "bytes leaked per request")
	fdEvery := flag.String("leak-fd-every", "100", "leak one fd every N requests (0: none)")
	flag.Parse()
	if err := run(*target, *out, *dur, []string{"--leak-bytes", *leak, "--leak-fd-every", *fdEvery}); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(target, out string, dur time.Duration, leakArgs []string) error {
	tmp, err := os.MkdirTemp("", "gen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pf := filepath.Join(tmp, "port")
	args := append(leakArgs, "--port-file", pf, "--max-lifetime", "5m")
	cmd := exec.Command(target, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var addr string
	for i := 0; i < 100 && addr == ""; i++ {
		b, _ := os.ReadFile(pf)
		addr = strings.TrimSpace(string(b))
		time.Sleep(50 * time.Millisecond)
	}
	if addr == "" {
		return fmt.Errorf("no port file")
	}
	url := "http://" + addr + "/"
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	rep, err := runner.Run(context.Background(), runner.Options{
		Load: load.Options{
			Endpoints:   []load.Endpoint{{Weight: 1, Method: "GET", URL: url}},
			Concurrency: 2, Rate: 200, Duration: dur, KeepAlive: true, Timeout: 5 * time.Second,
		},
		Target:   probes.Spec{PID: cmd.Process.Pid, URL: url},
		Sampler:  probes.SamplerOptions{SmapsInterval: 2 * time.Second},
		Interval: 500 * time.Millisecond,
		Warmup:   runner.Warmup{Fraction: 0.15},
		Cooldown: 8 * time.Second,
		OutDir:   out,
	})
	if err != nil {
		return err
	}
	fmt.Println("verdict:", rep.Verdict, "samples:", rep.Samples)
	return nil
}
