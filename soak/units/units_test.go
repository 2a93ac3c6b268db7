package units

import "testing"

func TestAmountAndRange(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Sig3(-0.0001), "-0.0001"},
		{Sig3(-0.0), "0"},
		{Sig3(650346), "650346"},
		{Sig3(0.0050123), "0.00501"},
		{Amount(1.46*(1<<40), "bytes"), "1.46 TiB"},
		{Amount(1023, "bytes"), "1023 B"},
		{Amount(2048, "bytes"), "2 KiB"},
		{Amount(650346, "fds"), "650346 fds"},
		{Amount(3.14159, ""), "3.14"},
		{Range(1000, 1045, "bytes"), "0.977 – 1.02 KiB"},
		{Range(-2, 5, "threads"), "-2 – 5 threads"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q; want %q", tc.got, tc.want)
		}
	}
}
