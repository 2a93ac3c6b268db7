package verdict

// The verdict words in one table: a resource's (leak, stable, plateau,
// inconclusive), a run's requests' (ok, failing) and a run's (leak,
// clean, inconclusive, failing). What every reader does with a word is
// read from its row: the run's overall verdict, an until-decided run's
// stop, the daemon's evidence and its alerts' resolve rule, the pages'
// badges. A new word is a constant where its kind's are and a row here;
// TestWordsTable fails on a word without a row.

// Tone is how a word reads: the pages' colour.
type Tone string

// Tones.
const (
	ToneBad  Tone = "bad"  // act on it
	ToneWarn Tone = "warn" // look at it
	ToneGood Tone = "good" // good news
	ToneNone Tone = "none" // nothing proven either way
)

// Word is one verdict word and what it means to each reader.
type Word struct {
	Name string
	Tone Tone
	// Icon goes beside the word on the pages, so that colour is never the
	// only cue.
	Icon string
	// Decided: the data proved it (an until-decided run may stop on it).
	Decided bool
	// Settled: a resource that reads it does not grow (flat, or its growth
	// ended): a run whose every resource is settled is clean, and a leak's
	// alert resolves only when each of its memory resources is.
	Settled bool
	// Finding: something to act on (a leak, failing requests): it pages,
	// and soakd run exits non-zero.
	Finding bool
}

// Words are the verdict words. A word that two kinds share (leak,
// inconclusive, failing) means the same to both.
var Words = []Word{
	{Name: Leak, Tone: ToneBad, Icon: "✗", Decided: true, Finding: true},
	{Name: Stable, Tone: ToneGood, Icon: "✓", Decided: true, Settled: true},
	{Name: Plateau, Tone: ToneWarn, Icon: "◆", Decided: true, Settled: true},
	{Name: Inconclusive, Tone: ToneNone, Icon: "◌"},
	{Name: HealthOK, Tone: ToneGood, Icon: "✓", Decided: true},
	{Name: HealthFailing, Tone: ToneBad, Icon: "✗", Decided: true, Finding: true},
	{Name: OverallClean, Tone: ToneGood, Icon: "✓", Decided: true},
}

// WordOf is the row of a verdict word; ok is false for a word that is no
// verdict.
func WordOf(name string) (Word, bool) {
	for _, w := range Words {
		if w.Name == name {
			return w, true
		}
	}
	return Word{}, false
}

// Settled says whether a resource's verdict v shows it does not grow
// (stable or plateau).
func Settled(v string) bool { w, _ := WordOf(v); return w.Settled }

// Decided says whether verdict v is proven (leak, stable, plateau; ok or
// failing).
func Decided(v string) bool { w, _ := WordOf(v); return w.Decided }
