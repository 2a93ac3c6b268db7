package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/soakd/soakd/soak/urlx"
)

// daemonFlags are the flags `soakd run --daemon` takes: the job's config,
// in the daemon, says everything else.
var daemonFlags = map[string]bool{"daemon": true, "token-file": true, "quiet": true, "log-level": true}

// daemonArgs checks the command line of `soakd run --daemon URL JOB` and
// sets f.job.
func daemonArgs(fs *pflag.FlagSet, f *runFlags) error {
	var other []string
	fs.Visit(func(fl *pflag.Flag) {
		if !daemonFlags[fl.Name] {
			other = append(other, "--"+fl.Name)
		}
	})
	if len(other) > 0 {
		return fmt.Errorf("--daemon runs a job as the daemon's config says: %s cannot go with it (only --token-file)", strings.Join(other, ", "))
	}
	if _, err := urlx.Parse(f.daemon, urlx.HTTP); err != nil {
		return fmt.Errorf("--daemon: %w (the daemon's base URL, e.g. http://127.0.0.1:7797)", err)
	}
	switch rest := fs.Args(); len(rest) {
	case 1:
		f.job = rest[0]
	case 0:
		return errors.New("--daemon: missing the job's name: soakd run --daemon URL JOB")
	default:
		return fmt.Errorf("--daemon: one job name expected, got %d arguments: %s", len(rest), strings.Join(rest, " "))
	}
	return nil
}

// runOnDaemon asks the daemon at f.daemon to run job f.job now
// (POST /api/v1/jobs/JOB/runs) and prints the run's ID and page.
func runOnDaemon(f runFlags, stdout, stderr io.Writer) int {
	base := strings.TrimSuffix(f.daemon, "/")
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/jobs/"+url.PathEscape(f.job)+"/runs", nil)
	if err != nil {
		fmt.Fprintln(stderr, "soakd run --daemon:", err)
		return exitUsage
	}
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "soakd run: --token-file: %v\n", err)
			return exitUsage
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(b)))
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "soakd run --daemon: %v (is soakd serve running and listening at %s?)\n", err, base)
		return exitUsage
	}
	defer resp.Body.Close()
	var ans struct {
		RunID int64  `json:"run_id"`
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ans)
	switch {
	case resp.StatusCode == http.StatusAccepted && ans.RunID > 0:
		fmt.Fprintf(stdout, "started run %d of job %s: %s/runs/%d\n", ans.RunID, f.job, base, ans.RunID)
		return exitOK
	case resp.StatusCode == http.StatusNotFound:
		fmt.Fprintf(stderr, "soakd run --daemon: job %q not found at %s (GET %s/api/v1/jobs lists the jobs)\n", f.job, base, base)
	case resp.StatusCode == http.StatusConflict && ans.RunID > 0:
		fmt.Fprintf(stderr, "soakd run --daemon: job %s is already running: run %d, %s/runs/%d\n", f.job, ans.RunID, base, ans.RunID)
	case resp.StatusCode == http.StatusUnauthorized:
		fmt.Fprintf(stderr, "soakd run --daemon: the daemon wants its API token: give --token-file FILE\n")
	default:
		fmt.Fprintf(stderr, "soakd run --daemon: %s: %s\n", resp.Status, ans.Error)
	}
	return exitUsage
}
