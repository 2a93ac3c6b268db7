package sites

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// jcmdHistogram runs `jcmd PID GC.class_histogram` (it forces a full GC).
func jcmdHistogram(ctx context.Context, jcmd string, pid int) ([]byte, error) {
	cmd := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "GC.class_histogram")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("jcmd %d GC.class_histogram: %w: %s", pid, err, strings.TrimSpace(firstLine(errb.String()+out.String())))
	}
	if bytes.Contains(out.Bytes(), []byte("AttachNotSupportedException")) || bytes.Contains(out.Bytes(), []byte("Unable to open socket")) {
		return nil, fmt.Errorf("jcmd %d GC.class_histogram: %s", pid, firstLine(out.String()))
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// parseHistogram reads a class histogram's rows:
//
//	num     #instances         #bytes  class name (module)
//	  1:         12345        1234567  [B (java.base@21)
func parseHistogram(b []byte) (map[string]amount, error) {
	out := map[string]amount{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		n, err1 := strconv.ParseFloat(f[1], 64)
		by, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		name := className(f[3])
		a := out[name]
		a.bytes += by
		a.objects += n
		out[name] = a
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no class histogram rows in jcmd's output")
	}
	return out, sc.Err()
}

// className spells a JVM descriptor as Java does, with the descriptor
// after it: "[B" → "byte[] ([B)".
func className(d string) string {
	prims := map[byte]string{'B': "byte", 'C': "char", 'D': "double", 'F': "float", 'I': "int", 'J': "long", 'S': "short", 'Z': "boolean"}
	dims := strings.Count(d, "[")
	if dims == 0 {
		return d
	}
	elem := d[dims:]
	var java string
	switch {
	case len(elem) == 1 && prims[elem[0]] != "":
		java = prims[elem[0]]
	case strings.HasPrefix(elem, "L") && strings.HasSuffix(elem, ";"):
		java = elem[1 : len(elem)-1]
	default:
		return d
	}
	return java + strings.Repeat("[]", dims) + " (" + d + ")"
}
