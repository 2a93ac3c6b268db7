package web

import "testing"

// TestNumbersHaveUnitsAndNoExponent: figures print with their unit, three
// significant digits, no scientific notation, one unit per interval, and
// no "-0".
func TestNumbersHaveUnitsAndNoExponent(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{perRequest(5.3e3*(1<<20), "bytes"), "5.18 GiB"},
		{perRequest(1020, "bytes"), "1020 B"},
		{perRequest(101.4, "bytes"), "101 B"},
		{perRequest(0.0123, "fds"), "0.0123 fds"},
		{perRequest(-0.0001, "bytes"), "-0.0001 B"},
		{perRequest(4096, "bytes"), "4 KiB"},
		{perRequest(123456, "threads"), "123456 threads"},
		{perRequestRange(1020, 1024, "bytes"), "0.996 – 1 KiB"},
		{perRequestRange(-3, 200, "bytes"), "-3 – 200 B"},
		{percent(-0.001), "0 %"},
		{percent(0.456), "46 %"},
		{sig3(-0.0004), "-0.0004"},
		{sig3(-0.00000000000001), "0"},
	} {
		if c.got != c.want {
			t.Errorf("got %q; want %q", c.got, c.want)
		}
	}
}
