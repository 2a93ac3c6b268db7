// Command dropcaps is a test helper: it drops ambient capabilities, then
// prints the CapAmb line a child process sees and its own CapEff line.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/soakd/soakd/soak/sdnotify"
)

func main() {
	if err := sdnotify.DropAmbientCaps(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := exec.Command("/bin/grep", "^CapAmb:", "/proc/self/status").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("child " + string(out))
	f, _ := os.Open("/proc/self/status")
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "CapEff:") {
			fmt.Println("self " + s.Text())
		}
	}
}
