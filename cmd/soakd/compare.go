package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/urlx"
)

// exitInconclusive: soakd compare could not decide whether the new run is
// worse (some metric's interval is wider than its margin).
const exitInconclusive = 4

// compareFlags are soakd compare's flags.
type compareFlags struct {
	daemon, token, markdown, junit string
	json                           bool
	seed                           uint64
	m                              compare.Margins
	latencyPct, cpuPct, tputPct    float64
	p99Pct, p999Pct                float64
	sharePct                       float64
	runSpread                      float64
}

func newCompareFlagSet(f *compareFlags, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.StringVar(&f.daemon, "daemon", "", "read OLD and NEW as run ids from this soakd daemon (its URL, e.g. http://127.0.0.1:9750)")
	fs.StringVar(&f.token, "token", "", "the daemon's token, when it needs one for reads (default: $SOAKD_TOKEN)")
	fs.BoolVar(&f.json, "json", false, "print the comparison as JSON")
	fs.StringVar(&f.markdown, "markdown", "", "also write the comparison as a Markdown table to this file (for a CI job's summary)")
	fs.StringVar(&f.junit, "junit", "", "also write the comparison as JUnit XML to this file: one test case per metric, failed when regressed")
	declareMargins(fs, f, compare.DefaultMargins(), "the old run's")
	fs.Float64Var(&f.runSpread, "run-spread", 1, "how far two separate runs of one build differ by themselves, as a multiple of what soakd measured (docs/compare.md); each latency, CPU and throughput interval is widened by it; 0 for runs known to share their process and machine state")
	fs.Uint64Var(&f.seed, "seed", 1, "the bootstrap's seed: the same runs and seed give the same intervals")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: soakd compare [flags] OLD NEW\n\n"+
			"Judge whether the NEW run is worse than the OLD one. Each of OLD and NEW is a\n"+
			"run directory (soakd run --out), its report.json (with its samples.csv beside\n"+
			"it for latency, CPU and errors), a samples.csv (analysed afresh), or with\n"+
			"--daemon a stored run's id.\n\n"+
			"For every resource both runs fitted, the difference of the per-request slopes\n"+
			"(new − old) with a 95 % interval (the runs' own fits', or a fit of their\n"+
			"readings paired by their share of the soak); for latency p50, p99 and p99.9,\n"+
			"CPU per request and throughput the relative difference with a bootstrap of\n"+
			"ln(new/old) over pairs of time blocks; the error rate's difference in points.\n"+
			"Each is judged against its margin, shown beside its flag: regressed (the\n"+
			"interval lies above it), same (the interval lies inside ±margin), improved\n"+
			"(the interval lies below −margin), or inconclusive. The overall verdict is\n"+
			"the worst of them. A run compared with itself reads same.\n\n"+
			"Exit code 0: same or improved, 1: regressed, 4: inconclusive, 2: a usage\n"+
			"error or an unreadable run. One line with the result goes to stderr.\n\nFlags:\n")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	return fs
}

// marginFlags are the flags that set each margin, by its key: the
// comparison's text names them beside each margin.
var marginFlags = map[string]string{
	compare.MarginLeakBytes: "--leak-margin", compare.MarginLeakCount: "--leak-margin-count",
	compare.MarginLeakShare: "--leak-margin-share", compare.MarginLatency: "--latency-margin",
	compare.MarginLatencyP99: "--latency-p99-margin", compare.MarginLatencyP999: "--latency-p999-margin",
	compare.MarginCPU: "--cpu-margin", compare.MarginErrorPoints: "--error-margin", compare.MarginThroughput: "--throughput-margin",
}

// margins turns the percent flags into the comparison's margins.
func (f *compareFlags) margins() (compare.Margins, error) {
	m := f.m
	m.LeakShare, m.Latency, m.CPU, m.Throughput = f.sharePct/100, f.latencyPct/100, f.cpuPct/100, f.tputPct/100
	m.LatencyP99, m.LatencyP999 = f.p99Pct/100, f.p999Pct/100
	if err := m.Validate(); err != nil {
		field, rest, _ := strings.Cut(strings.TrimPrefix(err.Error(), "margins."), ":")
		if flag, ok := marginFlags[field]; ok {
			return m, errors.New(flag + ":" + rest)
		}
		return m, err
	}
	return m, nil
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	var f compareFlags
	fs := newCompareFlagSet(&f, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "soakd compare: want two runs: soakd compare [flags] OLD NEW")
		return exitUsage
	}
	m, err := f.margins()
	if err != nil {
		fmt.Fprintln(stderr, "soakd compare:", err)
		return exitUsage
	}
	if !(f.runSpread >= 0) || math.IsInf(f.runSpread, 0) {
		fmt.Fprintf(stderr, "soakd compare: --run-spread: must be a number >= 0 (1: the spread soakd measured; 0: none), got %v\n", f.runSpread)
		return exitUsage
	}
	var runs [2]*model.Report
	for i, arg := range fs.Args() {
		if runs[i], err = f.load(arg); errors.Is(err, errSweep) {
			fmt.Fprintf(stderr, "soakd compare: %s is %v\n", arg, err)
			return exitUsage
		} else if err != nil {
			fmt.Fprintf(stderr, "soakd compare: %s: %v\n", arg, err)
			return exitUsage
		}
	}
	res := compare.Compare(compare.FromReport(runs[0]), compare.FromReport(runs[1]), compare.Options{Margins: m, Seed: f.seed, MarginNames: marginFlags,
		RunSpread: compare.DefaultRunSpread().Scaled(f.runSpread), ControlCPU: true})
	if err := f.write(res, stdout); err != nil {
		fmt.Fprintln(stderr, "soakd compare:", err)
		return exitUsage
	}
	fmt.Fprintln(stderr, res.Line())
	return compareExit(res.Verdict)
}

// compareExit is the exit code of an overall verdict.
func compareExit(v string) int {
	switch v {
	case compare.Regressed:
		return exitLeak
	case compare.Same, compare.Improved:
		return exitOK
	}
	return exitInconclusive
}

// write prints the comparison and writes the files asked for.
func (f *compareFlags) write(res compare.Result, stdout io.Writer) error {
	var err error
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return fmt.Errorf("writing the comparison: %w", err)
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{{"--markdown", f.markdown, res.WriteMarkdown}, {"--junit", f.junit, res.WriteJUnit}} {
		if out.path == "" {
			continue
		}
		if err := createWith(out.path, out.write); err != nil {
			return fmt.Errorf("%s %s: %w", out.flag, out.path, err)
		}
	}
	return nil
}

func createWith(path string, write func(io.Writer) error) error {
	fl, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fl); err != nil {
		fl.Close()
		return err
	}
	return fl.Close()
}

// load reads one run: from the daemon by id, or from a directory or file.
func (f *compareFlags) load(arg string) (*model.Report, error) {
	if f.daemon != "" {
		id, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || id <= 0 {
			return nil, errors.New("with --daemon, give a run id (a positive number)")
		}
		return f.fetch(id)
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return loadDir(arg)
	case strings.HasSuffix(arg, ".json"):
		return loadReport(arg, filepath.Join(filepath.Dir(arg), "samples.csv"))
	}
	return analyzeDefault(arg)
}

// loadDir reads a run directory: its report.json and samples.csv, or its
// samples.csv alone (analysed afresh).
func loadDir(dir string) (*model.Report, error) {
	rep, err := loadReport(filepath.Join(dir, "report.json"), filepath.Join(dir, "samples.csv"))
	if errors.Is(err, fs.ErrNotExist) {
		return analyzeDefault(filepath.Join(dir, "samples.csv"))
	}
	return rep, err
}

// loadReport reads a report.json, and the samples at csvPath when they
// are there.
func loadReport(path, csvPath string) (*model.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isSweep(b) {
		return nil, errSweep
	}
	var rep model.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: not a soakd report: %w", path, err)
	}
	fl, err := os.Open(csvPath)
	if errors.Is(err, fs.ErrNotExist) {
		return &rep, nil
	} else if err != nil {
		return nil, err
	}
	defer fl.Close()
	if rep.Records, err = model.ReadCSV(fl); err != nil {
		return nil, fmt.Errorf("%s: %w", csvPath, err)
	}
	return &rep, nil
}

// errSweep words a sweep given where a run is wanted, after "DIR is".
var errSweep = errors.New("a sweep (its report.json holds levels and a knee), not a run: compare two runs (soakd run --out DIR), or two sweeps' knees and levels side by side in their report.txt (a daemon's sweep job logs the change since its last sweep as since_last_sweep)")

// isSweep tells whether a report.json is a sweep's (`soakd sweep --out`):
// its levels and knee, where a run's report has neither.
func isSweep(b []byte) bool {
	var top struct {
		Levels json.RawMessage `json:"levels"`
		Knee   json.RawMessage `json:"knee"`
	}
	return json.Unmarshal(b, &top) == nil && len(top.Levels) > 0 && len(top.Knee) > 0
}

// analyzeDefault analyses a samples.csv with the default thresholds.
func analyzeDefault(path string) (*model.Report, error) {
	th := runner.DefaultThresholds()
	ao, err := th.Analysis()
	if err != nil {
		return nil, err
	}
	return analyzeFile(path, ao, os.Stderr)
}

// fetch reads a stored run's report and samples from the daemon.
func (f *compareFlags) fetch(id int64) (*model.Report, error) {
	base, err := urlx.Parse(strings.TrimRight(f.daemon, "/"), urlx.HTTP)
	if err != nil {
		return nil, fmt.Errorf("--daemon: %w (the daemon's URL, e.g. http://127.0.0.1:9750)", err)
	}
	var rep model.Report
	if err := f.get(base.String()+fmt.Sprintf("/api/v1/runs/%d", id), func(r io.Reader) error {
		return json.NewDecoder(r).Decode(&rep)
	}); err != nil {
		return nil, err
	}
	err = f.get(base.String()+fmt.Sprintf("/api/v1/runs/%d/samples?format=csv", id), func(r io.Reader) (err error) {
		rep.Records, err = model.ReadCSV(r)
		return err
	})
	return &rep, err
}

func (f *compareFlags) get(u string, read func(io.Reader) error) error {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	tok := f.token
	if tok == "" {
		tok = os.Getenv("SOAKD_TOKEN")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	if err := read(resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}
