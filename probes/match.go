package probes

import (
	"context"
	"fmt"
	"strings"

	"github.com/shirou/gopsutil/v3/common"
	"github.com/shirou/gopsutil/v3/process"
)

// procContext points gopsutil at a procfs root.
func procContext(ctx context.Context, root string) context.Context {
	return context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostProcEnvKey: root})
}

// cmdlineOf returns pid's arguments through gopsutil (one read of
// /proc/PID/cmdline; kernel threads have none).
func cmdlineOf(fs *procFS, pid int32) ([]string, error) {
	p := &process.Process{Pid: pid}
	return p.CmdlineSliceWithContext(procContext(context.Background(), fs.root))
}

// matching returns the processes whose command line matches t.re, leaving
// out soakd and its ancestors (whose command lines hold the regexp).
func (t *Target) matching(ctx context.Context) ([]candidate, error) {
	pids, err := process.PidsWithContext(procContext(ctx, t.fs.root))
	if err != nil {
		return nil, fmt.Errorf("list processes in %s: %w", t.fs.root, err)
	}
	skip := t.selfAndAncestors()
	var found []candidate
	for _, pid := range pids {
		if skip[pid] {
			continue
		}
		c, ok := t.candidateOf(pid)
		if ok && c.Cmdline != "" && t.re.MatchString(c.Cmdline) {
			found = append(found, c)
		}
	}
	return found, nil
}

// selfAndAncestors is soakd's PID and those of its ancestors, as seen
// under the procfs root.
func (t *Target) selfAndAncestors() map[int32]bool {
	skip := map[int32]bool{}
	for pid := t.selfPID; pid > 1 && !skip[pid]; {
		skip[pid] = true
		b, err := t.fs.readPid(pid, "stat")
		if err != nil {
			break
		}
		s, err := parseStat(b)
		if err != nil {
			break
		}
		pid = s.PPID
	}
	return skip
}

// splitCommand splits a command line shell-like, without a shell: words
// are separated by blanks; single quotes keep everything; double quotes
// keep everything but backslash escapes of \ " $ `; a backslash outside
// quotes escapes the next character.
func splitCommand(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune
		esc    bool
	)
	for _, r := range s {
		switch {
		case esc:
			if quote == '"' && !strings.ContainsRune(`\"$`+"`", r) {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case esc:
		return nil, fmt.Errorf("trailing backslash")
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
}
