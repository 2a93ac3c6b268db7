package probes

import (
	"os"
	"testing"
)

func TestParseTCPLine(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    tcpEntry
		wantErr string
	}{
		{name: "listen v4", in: "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0",
			want: tcpEntry{LocalPort: 8080, State: tcpListen, Inode: 12345}},
		{name: "time wait v6", in: "   1: 00000000000000000000000001000000:A3F2 00000000000000000000000001000000:1F90 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3 0000000000000000",
			want: tcpEntry{LocalPort: 0xA3F2, State: tcpTimeWait, Inode: 0}},
		{name: "short", in: "   0: 0100007F:1F90 00000000:0000 0A", wantErr: "tcp: fewer than 10 fields"},
		{name: "no slot colon", in: "   0 0100007F:1F90 00000000:0000 0A 0:0 0:0 0 0 0 1", wantErr: `tcp: first field is not "N:"`},
		{name: "no port", in: "   0: 0100007F 00000000:0000 0A 0:0 0:0 0 0 0 1", wantErr: "tcp: local address has no ':'"},
		{name: "port too big", in: "   0: 0100007F:1FFFF 00000000:0000 0A 0:0 0:0 0 0 0 1", wantErr: `tcp: local port: strconv.ParseUint: parsing "1FFFF": value out of range`},
		{name: "bad state", in: "   0: 0100007F:1F90 00000000:0000 ZZ 0:0 0:0 0 0 0 1", wantErr: `tcp: state: strconv.ParseUint: parsing "ZZ": invalid syntax`},
		{name: "bad inode", in: "   0: 0100007F:1F90 00000000:0000 0A 0:0 0:0 0 0 0 -1", wantErr: `tcp: inode: strconv.ParseUint: parsing "-1": invalid syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTCPLine([]byte(tt.in))
			if errText(err) != tt.wantErr {
				t.Fatalf("err = %q; want %q", errText(err), tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestParseNetTCPSkipsMalformedRows(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		rows        int
		skipped     int
		firstErrMsg string
	}{
		{name: "header only", in: "  sl  local_address rem_address   st\n"},
		{name: "empty", in: ""},
		{name: "fixture", in: mustRead(t, "testdata/proc/100/net/tcp"), rows: 8, skipped: 1, firstErrMsg: "tcp: fewer than 10 fields"},
		{name: "blank lines are not rows", in: "hdr\n\n   0: 0100007F:0050 0:0 01 0:0 0:0 0 0 0 7\n\n", rows: 1},
		{name: "torn last row", in: "hdr\n   0: 0100007F:0050 0:0 01 0:0 0:0 0 0 0 7\n   1: 0100007F:00", rows: 1, skipped: 1, firstErrMsg: "tcp: fewer than 10 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := 0
			skipped, err := parseNetTCP([]byte(tt.in), func(tcpEntry) { rows++ })
			if rows != tt.rows || skipped != tt.skipped || errText(err) != tt.firstErrMsg {
				t.Errorf("got %d rows, %d skipped, %q; want %d, %d, %q", rows, skipped, errText(err), tt.rows, tt.skipped, tt.firstErrMsg)
			}
		})
	}
}

func TestTCPCounter(t *testing.T) {
	c := newTCPCounter()
	for i := 0; i < 2; i++ { // the second round checks reset
		c.reset()
		for _, ino := range []uint64{1001, 1002, 2001, 2002} {
			c.owned[ino] = struct{}{}
		}
		for _, f := range []string{"testdata/proc/100/net/tcp", "testdata/proc/100/net/tcp6"} {
			parseNetTCP([]byte(mustRead(t, f)), c.add)
		}
		got := c.result()
		want := tcpCounts{Established: 1, CloseWait: 1, TimeWait: 3, Listen: 2}
		if got != want {
			t.Errorf("round %d: got %+v; want %+v", i, got, want)
		}
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzParseNetTCP(f *testing.F) {
	f.Add([]byte("hdr\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1\n"))
	f.Add([]byte("hdr\n   0: :: : 0A 0:0 0:0 0 0 0 1\n\n\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rows := 0
		skipped, err := parseNetTCP(b, func(e tcpEntry) { rows++ })
		if (skipped > 0) != (err != nil) {
			t.Errorf("skipped %d with first error %v", skipped, err)
		}
		c := newTCPCounter()
		c.owned[12345] = struct{}{}
		parseNetTCP(b, c.add)
		if r := c.result(); r.Established+r.CloseWait+r.Listen > rows {
			t.Errorf("counted %+v of %d rows", r, rows)
		}
	})
}
