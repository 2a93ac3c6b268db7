package load

import (
	"context"
	"testing"
	"time"
)

func TestFavourShiftsTheMix(t *testing.T) {
	srv := newTestServer(t, okHandler)
	o := Options{Endpoints: []Endpoint{{URL: srv.URL + "/a"}, {URL: srv.URL + "/b"}}, Requests: 4000, KeepAlive: true}
	e, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.Favour(1)
	if got := e.Favoured(); got != 1 {
		t.Fatalf("Favoured() = %d; want 1", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := e.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := e.EndpointCompleted()
	if got[0]+got[1] != s.Requests || got[1] != s.Endpoints[1].Requests {
		t.Fatalf("EndpointCompleted = %v; want the summary's %d and %d", got, s.Endpoints[0].Requests, s.Endpoints[1].Requests)
	}
	// Favoured: 0.7 + 0.3/2 = 85 % to /b; binomial sd at n=4000 is 0.6 %.
	if share := float64(got[1]) / float64(s.Requests); share < 0.8 || share > 0.9 {
		t.Errorf("favoured share = %.3f; want about %.2f", share, FavourShare+(1-FavourShare)/2)
	}
	e.Favour(5)
	if got := e.Favoured(); got != -1 {
		t.Errorf("Favour(5) on 2 endpoints: Favoured() = %d; want -1", got)
	}
}

func TestNextFavouredKeepsTheWeights(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
	}{
		{"equal", []int{1, 1}},
		{"three to one", []int{3, 1}},
		{"three endpoints", []int{1, 2, 5}},
		{"one off", []int{1, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := len(tc.weights)
			counts := make([]uint64, k)
			wsum := 0
			for _, w := range tc.weights {
				wsum += w
			}
			fav, blocks := -1, make([]int, k)
			for range 400 { // blocks of 1000 requests, split as pick does
				fav = NextFavoured(counts, tc.weights, fav)
				blocks[fav]++
				for i, w := range tc.weights {
					n := 300 * w / wsum
					if i == fav {
						n += 700
					}
					counts[i] += uint64(n)
				}
			}
			var total uint64
			for _, c := range counts {
				total += c
			}
			for i, w := range tc.weights {
				share, want := float64(counts[i])/float64(total), float64(w)/float64(wsum)
				if share < want-0.01 || share > want+0.01 {
					t.Errorf("endpoint %d: share %.3f; want %.3f (blocks %v)", i, share, want, blocks)
				}
				if w == 0 && blocks[i] > 0 {
					t.Errorf("endpoint %d of weight 0 favoured in %d blocks; want none", i, blocks[i])
				}
			}
		})
	}
	if got := NextFavoured([]uint64{5}, []int{1}, -1); got != -1 {
		t.Errorf("one endpoint: NextFavoured = %d; want -1", got)
	}
}
