package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// cmdAnalyze re-analyses a run's samples.csv with the analysis flags of
// `soakd run`: to re-judge a night's run with other thresholds, or to check
// the statistics on data from elsewhere.
func cmdAnalyze(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("analyze", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	th := runner.DefaultThresholds()
	declareThresholds(fs, &th)
	concurrency := fs.IntP("concurrency", "c", 0, "the run's closed-loop workers, for the CPU verdict (0: open loop, or not known)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: soakd analyze [flags] FILE.csv\n\n"+
			"Re-analyse a run's samples.csv (soakd run --out, soakd export --csv) with the\n"+
			"analysis flags of 'soakd run', and print the same verdict. Exit code 0: done,\n"+
			"1: a leak was found, 2: a usage error or an unreadable file, 5: the requests\n"+
			"are failing (the file's errors column; 5 wins over 1).\n\n"+
			"The file needs a header line naming its columns, in any order:\n  %s,\n"+
			"and at least one resource column:\n  %s.\n"+
			"Any other column of soakd's samples.csv may be left out; it then reads as\n"+
			"not sampled. Phases: baseline, warmup, soak, cooldown.\n\nFlags:\n",
			strings.ReplaceAll(strings.Join(model.RequiredColumns, ", "), "|", " or "), resourceColumnList())
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "soakd analyze: want one samples.csv file: soakd analyze [flags] FILE.csv")
		return exitUsage
	}
	ao, err := th.Analysis()
	if err != nil {
		fmt.Fprintln(stderr, "soakd analyze:", specError(fs, err))
		return exitUsage
	}
	if *concurrency < 0 {
		fmt.Fprintf(stderr, "soakd analyze: --concurrency must be >= 0, got %d\n", *concurrency)
		return exitUsage
	}
	ao.Concurrency = *concurrency
	path := fs.Arg(0)
	rep, err := analyzeFile(path, ao, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "soakd analyze: %s: %v\n", path, err)
		return exitUsage
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else if err = rep.WriteText(stdout); err == nil {
		_, err = fmt.Fprintln(stdout, "Load:              not in the file (soakd analyze reads the samples only)")
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakd analyze: writing the report:", err)
		return exitUsage
	}
	return reportExit(rep)
}

// analyzeFile reads a run's samples from path and analyses them with ao,
// over the resources the file holds. It is the one place where analyze
// reads a run's files. A last row cut short is left out with a warning
// on warn: the rows before it are a run's whole record up to the cut.
func analyzeFile(path string, ao analysis.Options, warn io.Writer) (*model.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, resources, err := model.ReadSamples(f)
	var cut *model.CutRowError
	if errors.As(err, &cut) {
		fmt.Fprintf(warn, "soakd: warning: %s: %v\n", path, err)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, errors.New("no samples, only a header: give one row per sample")
	}
	if err := attachProcs(recs, filepath.Join(filepath.Dir(path), "procs.csv")); err != nil {
		return nil, err
	}
	ao.Resources = resources
	run := readBeside(filepath.Join(filepath.Dir(path), "report.json"))
	if ao.Endpoints == nil {
		ao.Endpoints = run.endpointNames()
	}
	if run.Target != nil {
		ao.Collector = run.Target.Collector
		if model.BaselineLeftOut(run.Target.Upstreams, recs) {
			// As the live run did: the baseline measured the tree before
			// a followed upstream joined it.
			recs = model.WithoutBaseline(recs)
			fmt.Fprintf(warn, "soakd: %s: the baseline is left out, as in the run: a followed upstream joined the sampled tree after baseline samples were taken (report.json beside)\n", path)
		}
	}
	if ao.LiveHeap, err = readLiveHeap(filepath.Join(filepath.Dir(path), model.LiveHeapFile)); err != nil {
		return nil, err
	}
	ti := model.TargetInfo{Description: "samples from " + path, Probed: true, Collector: ao.Collector}
	rep := analysis.NewReport(recs, nil, ti, ao)
	run.carryWhere(rep)
	if !slices.ContainsFunc(recs, func(r model.Record) bool { return r.CPUUser > 0 || r.CPUSystem > 0 }) {
		rep.CPU = verdict.CPU{Bound: verdict.Inconclusive,
			Reason: "the file holds no CPU time of the target (columns cpu_user_seconds, cpu_system_seconds)"}
	}
	return rep, nil
}

// readLiveHeap reads the live-heap readings beside a samples.csv (a run
// on a Go target with a heap profile); none when there is no such file,
// as in runs before it was written.
func readLiveHeap(path string) ([]model.LiveHeap, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hs, err := model.ReadLiveHeap(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix or remove the file: without it the memory's endpoint split on a collected runtime is not judged)", path, err)
	}
	return hs, nil
}

// besideReport is what analyze reads of the report.json beside a
// samples.csv: what the samples cannot give again.
type besideReport struct {
	Load *struct {
		Endpoints []load.EndpointCount `json:"endpoints"`
	} `json:"load"`
	Resources map[string]struct {
		Mappings []verdict.Mapping `json:"mappings"`
		Sites    []verdict.Site    `json:"sites"`
	} `json:"resources"`
	Where  *model.Where `json:"where"`
	Target *struct {
		Collector string           `json:"collector"`
		Upstreams []model.Upstream `json:"upstreams"`
	} `json:"target"`
}

// readBeside reads the report.json at path; empty when there is none or
// it cannot be read (analyze then works from the samples alone).
func readBeside(path string) besideReport {
	var rep besideReport
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &rep) != nil {
		return besideReport{}
	}
	return rep
}

// endpointNames names the load's endpoints, for the samples' requests_<n>
// columns; nil (the columns' own names) when the report names fewer than
// two.
func (b besideReport) endpointNames() []string {
	if b.Load == nil || len(b.Load.Endpoints) < 2 {
		return nil
	}
	return analysis.EndpointNames(b.Load.Endpoints)
}

// carryWhere puts the run's findings of where its growth lives onto the
// re-analysis: the mappings and allocation sites come from snapshots of
// the live process, which the samples do not hold. Mappings are carried
// where the re-analysis still reads growth; a note says they are the
// run's.
func (b besideReport) carryWhere(rep *model.Report) {
	carried := false
	for name, old := range b.Resources {
		res, ok := rep.Resources[name]
		if !ok || (len(old.Mappings) == 0 && len(old.Sites) == 0) {
			continue
		}
		if model.Growing(res) {
			res.Mappings = old.Mappings
		}
		res.Sites = old.Sites
		rep.Resources[name] = res
		carried = true
	}
	if b.Where == nil && !carried {
		return
	}
	wh := model.Where{}
	if b.Where != nil {
		wh = *b.Where
	}
	wh.Notes = append([]string{"the mappings, sites and evidence are the run's, from the report.json beside the samples: re-analysis cannot snapshot the process again"}, wh.Notes...)
	rep.Where = &wh
}

// attachProcs reads the procs.csv beside a samples.csv, when there is
// one, onto the records, so that the lives check sees each process.
func attachProcs(recs []model.Record, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := model.ReadProcsCSV(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := model.AttachMembers(recs, rows); err != nil {
		return fmt.Errorf("%s: %w (it must come from the same run as the samples.csv beside it; move it away to analyse without it)", path, err)
	}
	return nil
}

func resourceColumnList() string {
	var cols []string
	for _, c := range model.CSVHeader {
		if _, ok := model.ResourceColumns[c]; ok {
			cols = append(cols, c)
		}
	}
	return strings.Join(cols, ", ")
}
