// Command mutants runs a mutation pass: each deliberate single-line bug
// of a list (bench/mutants/mutants.txt) is applied to a scratch copy of
// the committed tree, the tests named for it run, and the table says
// whether they failed (the bug is caught) or passed (it survives).
//
//	go run ./bench/mutants                 # every mutant
//	go run ./bench/mutants -only health    # those whose name holds "health"
//
// The copy is `git archive HEAD`, so uncommitted changes are not in it,
// and the working tree is never touched.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type mutant struct {
	name, file, old, new, pkg, run string
	line                           int // in the list
}

func main() {
	list := flag.String("list", "bench/mutants/mutants.txt", "the mutants")
	only := flag.String("only", "", "run the mutants whose name holds this")
	timeout := flag.Duration("timeout", 5*time.Minute, "the most one mutant's tests may take")
	flag.Parse()
	ms, err := parse(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "mutants-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command("sh", "-c", "git archive HEAD | tar -x -C "+dir).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "mutants: copying the tree: %v: %s\n", err, out)
		os.Exit(2)
	}
	fmt.Println("| mutant | file | test | result | time |")
	fmt.Println("|---|---|---|---|---|")
	survived, stale := 0, 0
	for _, m := range ms {
		if *only != "" && !strings.Contains(m.name, *only) {
			continue
		}
		res, took := apply(dir, m, *timeout)
		switch res {
		case "SURVIVED":
			survived++
		case "stale":
			stale++
		}
		fmt.Printf("| %s | %s | `%s -run '%s'` | %s | %.0f s |\n", m.name, m.file, m.pkg, m.run, res, took.Seconds())
	}
	fmt.Printf("\n%d survived, %d stale\n", survived, stale)
	if survived+stale > 0 {
		os.Exit(1)
	}
}

// apply plants m in dir, runs its tests and puts the file back.
func apply(dir string, m mutant, timeout time.Duration) (string, time.Duration) {
	path := filepath.Join(dir, m.file)
	orig, err := os.ReadFile(path)
	if err != nil {
		return "stale (" + err.Error() + ")", 0
	}
	if n := strings.Count(string(orig), m.old); n != 1 {
		return fmt.Sprintf("stale (the line is there %d times)", n), 0
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(orig), m.old, m.new, 1)), 0o644); err != nil {
		return "stale (" + err.Error() + ")", 0
	}
	defer os.WriteFile(path, orig, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", m.run, m.pkg)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	switch {
	case ctx.Err() != nil:
		return "caught only by the timeout", took
	case err == nil:
		return "SURVIVED", took
	case strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "setup failed"):
		return "stale (does not build)", took
	}
	return "caught", took
}

// parse reads the list: blocks of "key: value" lines (name, file, old,
// new, test) separated by blank lines; # starts a comment. test is the
// package, then the -run pattern.
func parse(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mutant
	var cur mutant
	flush := func() error {
		if cur.name == "" && cur.file == "" {
			return nil
		}
		if cur.name == "" || cur.file == "" || cur.old == "" || cur.pkg == "" {
			return fmt.Errorf("%s:%d: a mutant needs name, file, old, new and test", path, cur.line)
		}
		ms = append(ms, cur)
		cur = mutant{}
		return nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.TrimSpace(line) == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want key: value, got %q", path, n, line)
		}
		if cur.line == 0 {
			cur.line = n
		}
		v = strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(v)
		switch k {
		case "name":
			cur.name = v
		case "file":
			cur.file = v
		case "old":
			cur.old = v
		case "new":
			cur.new = v
		case "test":
			pkg, run, _ := strings.Cut(v, " ")
			cur.pkg, cur.run = pkg, strings.Trim(run, "'")
		default:
			return nil, fmt.Errorf("%s:%d: unknown key %q (name, file, old, new, test)", path, n, k)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return ms, sc.Err()
}
