package runner_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// TestEndToEndOtherInstancesExiting: other instances of the target's
// binary, outside its tree, exit one by one during the soak. Each exit
// moves its share of the program's text to the target, and the target's
// whole PSS and USS climb in a staircase (the premise, checked on the
// samples' pss_bytes), which read as a leak when soakd judged them. PSS
// and USS are judged on their anonymous-and-shared and dirty parts: a
// clean target is not a leak, and a leaking one still is, in both.
func TestEndToEndOtherInstancesExiting(t *testing.T) {
	t.Parallel()
	for _, leak := range []int{0, 2048} {
		t.Run(fmt.Sprintf("leak=%d", leak), func(t *testing.T) {
			t.Parallel()
			bin := soaktest.OwnCopy(t, soaktest.Binary(t, soaktest.Target))
			target := soaktest.StartServer(t, bin, "--max-lifetime", "5m", "--leak-bytes", fmt.Sprint(leak))
			var others []*soaktest.Server
			for range 8 {
				o := soaktest.StartServer(t, bin, "--max-lifetime", "5m")
				for range 50 { // touch the text that serves a request
					if resp, err := http.Get(o.URL); err == nil {
						resp.Body.Close()
					}
				}
				others = append(others, o)
			}
			// One exits every second from 3 s on: eight steps within the
			// 14 s of load (a warm-up of 15 %, then the soak).
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i, o := range others {
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(map[bool]int{true: 3, false: 1}[i == 0]) * time.Second):
					}
					syscall.Kill(o.PID, syscall.SIGTERM)
					<-o.Done
				}
			}()
			var dir string
			rep := soakTuned(t, target.URL, target.PID, load.Options{Rate: 800, Concurrency: 8, Duration: 14 * time.Second}, func(o *runner.Options) {
				o.Warmup = runner.Warmup{Fraction: 0.15}
				o.Sampler.SmapsInterval = time.Second
				dir = o.OutDir
			})
			close(stop)
			<-done
			f, err := os.Open(filepath.Join(dir, "samples.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := model.ReadCSV(f)
			if err != nil {
				t.Fatal(err)
			}
			// The rise over the soak of the whole and of what soakd judges.
			var whole, judged [2]float64
			pssDef, _ := model.ResourceNamed("pss")
			n := 0
			for _, r := range recs {
				v, ok := pssDef.Value(r)
				if r.Phase != verdict.Soak || !r.SmapsValid || !ok {
					continue
				}
				if n == 0 {
					whole[0], judged[0] = float64(r.PSS), v
				}
				whole[1], judged[1] = float64(r.PSS), v
				n++
			}
			mib := func(d [2]float64) float64 { return (d[1] - d[0]) / (1 << 20) }
			t.Logf("over the soak's %d smaps reads: PSS %+.1f MiB, the judged PSS %+.1f MiB", n, mib(whole), mib(judged))
			// Most of the instances' shares come over in the soak, and none
			// of them in what is judged.
			if d := mib(whole) - mib(judged); d < 2 {
				t.Errorf("the whole PSS rose %+.1f MiB over the soak and the judged part %+.1f MiB; want the whole ≥ 2 MiB more (the others' shares of the text)", mib(whole), mib(judged))
			}
			pss, uss := rep.Resources["pss"], rep.Resources["uss"]
			if pss.Series != "pss_anon_bytes" || uss.Series != "uss_dirty_bytes" || rep.Resources["rss"].Series != "" {
				t.Errorf("series: pss %q, uss %q, rss %q; want pss_anon_bytes, uss_dirty_bytes and none", pss.Series, uss.Series, rep.Resources["rss"].Series)
			}
			if leak == 0 {
				for name, r := range map[string]verdict.Resource{"pss": pss, "uss": uss} {
					if r.Verdict == verdict.Leak {
						t.Errorf("%s verdict = leak on a clean target whose siblings exited (%s)", name, r.Reason)
					}
				}
				if rep.Verdict == verdict.Leak {
					t.Errorf("overall verdict = leak on a clean target")
				}
				return
			}
			for name, r := range map[string]verdict.Resource{"pss": pss, "uss": uss} {
				if r.Verdict == verdict.Inconclusive {
					skipIfBehind(t, rep, 800, r.Reason)
				}
				if r.Verdict != verdict.Leak {
					t.Errorf("%s verdict = %q on a target leaking %d B/request; want leak (%s)", name, r.Verdict, leak, r.Reason)
				}
			}
		})
	}
}
