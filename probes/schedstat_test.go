package probes

import "testing"

func TestParseSchedstatWait(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"439113 0 1\n", 0, true},
		{"1234567 7654321 42\n", 7654321, true},
		{"1234567\n", 0, false},
		{"", 0, false},
		{"12 x 3\n", 0, false},
	} {
		got, ok := parseSchedstatWait([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseSchedstatWait(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
