// Command target is the test suites' misbehaving server: soakd's demo target
// as a program of its own. See package demo for its flags and endpoints.
package main

import (
	"os"

	"github.com/soakd/soakd/soak/demo"
)

func main() { os.Exit(demo.Main(os.Args[1:], nil)) }
