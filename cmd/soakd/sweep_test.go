package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestParseSweep reads the ladder's flags and words their errors as
// flags.
func TestParseSweep(t *testing.T) {
	o, _, err := parseSweep([]string{"--levels", "1,4,16", "--level-duration", "2s", "--pid", "1", "http://127.0.0.1:8080/"}, io.Discard)
	if err != nil || len(o.Levels) != 3 || o.Levels[2] != 16 || o.LevelDuration != 2*time.Second || o.Run.Target.PID != 1 {
		t.Fatalf("parseSweep = %+v, %v; want levels 1,4,16 of 2s at pid 1", o, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--levels", "5,2", "http://127.0.0.1:8080/"}, "--levels: want rising concurrencies >= 1"},
		{[]string{"--level-duration", "0", "http://127.0.0.1:8080/"}, "--level-duration: must be > 0"},
		{[]string{"-c", "8", "http://127.0.0.1:8080/"}, "--concurrency: not a sweep flag"},
		{[]string{"--rate", "5", "http://127.0.0.1:8080/"}, "--rate: not a sweep flag"},
		{[]string{}, "one URL expected"},
		{[]string{"--timeout", "-1s", "http://127.0.0.1:8080/"}, "--timeout:"},
	} {
		_, _, err := parseSweep(c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseSweep(%q) = %v; want %q", c.args, err, c.want)
		}
	}
}
