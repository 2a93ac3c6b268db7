package runner

import (
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
)

func TestBlockSamples(t *testing.T) {
	tests := []struct {
		name      string
		o         Options
		endpoints int
		want      int
	}{
		{"automatic interval, two endpoints", Options{}, 2, 12},
		{"automatic interval, ten endpoints", Options{}, 10, minBlockSamples},
		{"1 s over 8 h, two endpoints", Options{Interval: time.Second, Load: load.Options{Duration: 8 * time.Hour}}, 2, maxBlockSamples},
		{"1 s over 2 min, two endpoints", Options{Interval: time.Second, Load: load.Options{Duration: 2 * time.Minute}}, 2, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := blockSamples(plannedSamples(&tc.o), tc.endpoints); got != tc.want {
				t.Errorf("blockSamples = %d; want %d", got, tc.want)
			}
		})
	}
}

func TestMixerFavoursInTurn(t *testing.T) {
	eps := []load.Endpoint{{URL: "http://127.0.0.1:1/a"}, {URL: "http://127.0.0.1:1/b"}}
	eng, err := load.New(load.Options{Endpoints: eps, Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m := newMixer(&Options{FixedMix: true}, eng); m != nil {
		t.Errorf("FixedMix: a mixer; want none")
	}
	one, _ := load.New(load.Options{Endpoints: eps[:1], Requests: 1})
	if m := newMixer(&Options{}, one); m != nil {
		t.Errorf("one endpoint: a mixer; want none")
	}
	m := newMixer(&Options{}, eng)
	m.start()
	var favoured []int
	counts := []uint64{0, 0}
	for range 4 * m.block {
		f := eng.Favoured()
		counts[f] += 85
		counts[1-f] += 15
		m.sampled(counts)
		favoured = append(favoured, eng.Favoured())
	}
	changes := 0
	for i := 1; i < len(favoured); i++ {
		if favoured[i] != favoured[i-1] {
			changes++
		}
	}
	if changes != 4 && changes != 3 {
		t.Errorf("favoured %v: %d changes in 4 blocks; want 3 or 4", favoured, changes)
	}
}

// With a JVM's heap read at its young collections, a block ends at the
// first sample after collectionBlocks collections in it, however many
// samples that takes, and at the latest maxBlockSamples·collectionBlocks
// samples past its own length when none come.
func TestMixerBlocksSpanCollections(t *testing.T) {
	eps := []load.Endpoint{{URL: "http://127.0.0.1:1/a"}, {URL: "http://127.0.0.1:1/b"}}
	eng, err := load.New(load.Options{Endpoints: eps, Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := newMixer(&Options{}, eng)
	m.byCollections()
	m.start()
	counts := []uint64{0, 0}
	first := eng.Favoured()
	for i := range 40 { // a collection every 10 samples: 30 samples a block
		if i%10 == 9 {
			m.collected()
		}
		if ended := m.sampled(counts); ended >= 0 && i != 29 {
			t.Fatalf("a block ended at sample %d (%d collections in it); want at sample 29, after the 3rd", i, m.collections)
		}
	}
	if eng.Favoured() == first {
		t.Fatalf("the favoured endpoint is still %d after 3 collections", first)
	}
	n := 0
	for m.sampled(counts) < 0 {
		n++
	}
	if want := m.block + maxBlockSamples*collectionBlocks - 11; n != want {
		t.Errorf("without collections the block ended %d samples on; want %d", n, want)
	}
}
