package trend

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
)

// The lag-1 bias table: for each series length in lag1Ns and each AR(1)
// coefficient in lag1Rhos, the lag1Quantile-th quantile of the lag-1
// autocorrelation of the residuals of a least-squares line fitted to a
// stationary AR(1) series of that length. It is simulated with a fixed
// seed, so a verdict is reproducible, and stored in lag1table_gen.go
// (the simulation costs about 0.1 s of CPU, a tenth of a short soakd run's
// own CPU); it is simulated on first use only when the stored table does
// not fit lag1Ns and lag1Rhos.
var (
	lag1Ns   = []int{6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}
	lag1Rhos = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, maxRho}

	lag1Once  sync.Once
	lag1Table [][]float64 // [n index][rho index]
)

const lag1Reps = 600

// lag1Quantile is the quantile of the estimate that Lag1 inverts: the
// coefficient returned is the one under which the observed estimate would
// sit at this quantile, an upper confidence bound on the coefficient at
// 1 − lag1Quantile. A mean-unbiased coefficient is too low half of the
// time, and each time the interval is too narrow.
const lag1Quantile = 0.2

// expectedLag1 simulates the table.
func expectedLag1() [][]float64 {
	rng := rand.New(rand.NewPCG(0x1a91, 0x7ab1e))
	t := make([][]float64, len(lag1Ns))
	for i, n := range lag1Ns {
		x := make([]float64, n)
		for k := range x {
			x[k] = float64(k)
		}
		y, res := make([]float64, n), make([]float64, n)
		t[i] = make([]float64, len(lag1Rhos))
		for j, rho := range lag1Rhos {
			est := make([]float64, lag1Reps)
			for r := range est {
				e := rng.NormFloat64() / math.Sqrt(1-rho*rho)
				for k := range y {
					e = rho*e + rng.NormFloat64()
					y[k] = e
				}
				f := OLS(x, y) // Residuals, into one buffer: 100 000 series
				for k := range y {
					res[k] = y[k] - f.At(x[k])
				}
				est[r] = rawLag1(res)
			}
			sort.Float64s(est)
			t[i][j] = est[int(lag1Quantile*lag1Reps)]
		}
		// The mean rises with rho; keep it strictly monotone for inversion.
		for j := 1; j < len(t[i]); j++ {
			t[i][j] = math.Max(t[i][j], t[i][j-1]+1e-6)
		}
	}
	return t
}

// unbiasLag1 finds the coefficient whose mean estimate at length n is raw,
// interpolating the table linearly in rho and in 1/n.
func unbiasLag1(raw float64, n int) float64 {
	lag1Once.Do(func() {
		lag1Table = lag1Stored
		if !lag1TableFits(lag1Table) {
			lag1Table = expectedLag1()
		}
	})
	i := sort.SearchInts(lag1Ns, n)
	switch {
	case i == 0:
		return invert(lag1Table[0], raw)
	case i == len(lag1Ns):
		return invert(lag1Table[len(lag1Ns)-1], raw)
	}
	lo, hi := lag1Ns[i-1], lag1Ns[i]
	w := (1/float64(lo) - 1/float64(n)) / (1/float64(lo) - 1/float64(hi))
	a, b := invert(lag1Table[i-1], raw), invert(lag1Table[i], raw)
	return a + w*(b-a)
}

//go:generate go test -run TestLag1TableGenerated -update-lag1 .

// lag1TableFits says whether t has a row per length and a column per rho.
func lag1TableFits(t [][]float64) bool {
	if len(t) != len(lag1Ns) {
		return false
	}
	for _, row := range t {
		if len(row) != len(lag1Rhos) {
			return false
		}
	}
	return true
}

// invert maps a mean estimate back to the coefficient along one row.
func invert(row []float64, raw float64) float64 {
	if raw <= row[0] {
		return 0
	}
	for j := 1; j < len(row); j++ {
		if raw <= row[j] {
			f := (raw - row[j-1]) / (row[j] - row[j-1])
			return lag1Rhos[j-1] + f*(lag1Rhos[j]-lag1Rhos[j-1])
		}
	}
	return maxRho
}
