package verdict

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
)

// FuzzAnalyzeResource: any points, NaN and ±Inf among them, in any phase,
// with or without lives, give a verdict, a reason and a result that JSON
// can carry, and never panic or hang.
func FuzzAnalyzeResource(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 0.0)
	f.Add(make([]byte, 400), 1e9)
	nan := make([]byte, 0, 120)
	for i := range 10 {
		nan = binary.LittleEndian.AppendUint64(nan, math.Float64bits([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e6}[i%4]))
		nan = append(nan, byte(i), 1, 1, 4)
	}
	f.Add(nan, 0.0)
	f.Fuzz(func(t *testing.T, data []byte, limit float64) {
		var pts []Point
		lives := map[int][]Point{}
		var req float64
		for i := 0; i+12 <= len(data); i += 12 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(data[i:]))
			step, inc, life, ph := data[i+8], data[i+9], data[i+10], data[i+11]
			req += float64(step % 8)
			if step == 255 {
				req = math.NaN()
			}
			p := Point{Requests: req, Seconds: float64(i), Value: v, Incarnation: int(inc % 2), Phase: Phase(ph % 4)}
			pts = append(pts, p)
			lives[int(life%4)] = append(lives[int(life%4)], p)
		}
		if math.IsNaN(limit) || math.IsInf(limit, 0) {
			limit = 0
		}
		opt := ResourceOptions{Name: "x", Unit: "bytes", Limit: limit}
		for _, l := range lives {
			opt.Lives = append(opt.Lives, l)
		}
		res := AnalyzeResource(pts, opt)
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("got %v encoding %+v; want no error", err, res)
		}
		if res.Verdict == "" || res.Reason == "" {
			t.Fatalf("got verdict %q reason %q; want both", res.Verdict, res.Reason)
		}
	})
}
