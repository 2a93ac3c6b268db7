package probes

import "testing"

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in        string
		run, wait uint64
		ok        bool
	}{
		{"439113 0 1\n", 439113, 0, true},
		{"1234567 7654321 42\n", 1234567, 7654321, true},
		{"1234567\n", 0, 0, false},
		{"", 0, 0, false},
		{"12 x 3\n", 0, 0, false},
	} {
		run, wait, ok := parseSchedstat([]byte(tc.in))
		if ok != tc.ok || (ok && (run != tc.run || wait != tc.wait)) {
			t.Errorf("parseSchedstat(%q) = %d, %d, %v; want %d, %d, %v", tc.in, run, wait, ok, tc.run, tc.wait, tc.ok)
		}
	}
}
