package verdict

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
)

// FuzzAnalyzeResource: any points give a verdict, a reason and a result
// that JSON can carry, and never panic.
func FuzzAnalyzeResource(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 0.0)
	f.Add(make([]byte, 400), 1e9)
	f.Fuzz(func(t *testing.T, data []byte, limit float64) {
		var pts []Point
		var req float64
		for i := 0; i+4 <= len(data); i += 4 {
			req += float64(data[i] % 8)
			v := binary.LittleEndian.Uint16(data[i+1:])
			pts = append(pts, Point{Requests: req, Seconds: float64(i), Value: float64(v),
				Incarnation: int(data[i+3] % 2), Phase: Phase(data[i+3] % 3)})
		}
		if math.IsNaN(limit) || math.IsInf(limit, 0) {
			limit = 0
		}
		res := AnalyzeResource(pts, ResourceOptions{Name: "x", Unit: "bytes", Limit: limit})
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("got %v encoding %+v; want no error", err, res)
		}
		if res.Verdict == "" || res.Reason == "" {
			t.Fatalf("got verdict %q reason %q; want both", res.Verdict, res.Reason)
		}
	})
}
