package babyjub

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// A dudect-style check (Reparaz, Balasch, Verbauwhede, "Dude, is my code
// constant time?", DATE 2017) of the secret-key operations: time one
// operation on two classes of input, a fixed one and fresh random ones,
// in random interleaving, drop the slowest measurements (preemption, GC,
// interrupts), and compare the classes' means with Welch's t-test. A
// secret-dependent branch or memory access shows as a t that grows with
// the number of measurements; noise alone keeps |t| small. As dudect does,
// only |t| > timingThreshold fails, which a shared, loaded CI machine does
// not reach by chance. It runs in a second or two, also under -short: a
// leak introduced by a change must fail CI.
const (
	timingSamples   = 3000 // per class
	timingThreshold = 10
)

// TestScalarBaseMultTiming: k·G for k = 0 against random k < 2^252.
func TestScalarBaseMultTiming(t *testing.T) {
	rng := rand.New(rand.NewChaCha8([32]byte{7}))
	var fixed scalar
	random := make([]scalar, timingSamples)
	for i := range random {
		for j := range random[i] {
			random[i][j] = rng.Uint64()
		}
		random[i][3] &= 1<<59 - 1 // below 2^252, as signedRadix16 requires
	}
	checkTiming(t, rng, func(class, i int) {
		k := &fixed
		if class == 1 {
			k = &random[i]
		}
		scalarBaseMult(k)
	})
}

// TestSignTiming: one key against random keys, each signing fresh random
// messages. Signing is deterministic: with the message fixed as well, the
// fixed class would repeat one blinding factor β, and the one
// variable-time step (the blinded inversion, whose time depends on Z·β
// only) would take one arbitrary time instead of its average; messages
// are public, so varying them in both classes hides nothing.
func TestSignTiming(t *testing.T) {
	rng := rand.New(rand.NewChaCha8([32]byte{8}))
	keyOf := func(seedByte byte) *PrivateKey {
		seed := make([]byte, SeedSize)
		for i := range seed {
			seed[i] = seedByte ^ byte(rng.Uint32())
		}
		k, err := NewPrivateKey(seed)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	fixedKey := keyOf(0)
	const keys = 64 // distinct random keys; messages are fresh for every call
	random := make([]*PrivateKey, keys)
	msgs := make([]fr.Element, timingSamples)
	for i := range random {
		random[i] = keyOf(byte(i))
	}
	for i := range msgs {
		msgs[i].SetUint64(rng.Uint64())
	}
	checkTiming(t, rng, func(class, i int) {
		if class == 0 {
			Sign(fixedKey, msgs[i])
			return
		}
		Sign(random[i%keys], msgs[i])
	})
}

// checkTiming times op(class, i) timingSamples times for each class in a
// random order and fails if Welch's t of the cropped classes exceeds the
// threshold in each of timingAttempts runs: a burst of load on a shared
// machine can push one run over it, a leak pushes every run (a planted
// branch on the scalar's digits gives |t| ≈ 48).
func checkTiming(t *testing.T, rng *rand.Rand, op func(class, i int)) {
	var worst float64
	for range timingAttempts {
		tv := timingT(t, rng, op)
		if math.Abs(tv) <= timingThreshold {
			return
		}
		worst = max(worst, math.Abs(tv))
	}
	t.Errorf("timing depends on the input class: |t| > %d in %d runs of %d (largest %.1f)", timingThreshold, timingAttempts, timingAttempts, worst)
}

// timingAttempts is how many runs must all exceed the threshold to fail.
const timingAttempts = 3

// timingT is one run of checkTiming: Welch's t of the two classes.
func timingT(t *testing.T, rng *rand.Rand, op func(class, i int)) float64 {
	order := make([]int, 2*timingSamples)
	for i := timingSamples; i < len(order); i++ {
		order[i] = 1
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for i := range 200 { // warm up: tables, caches, the path calibration
		op(i%2, i)
	}
	var times [2][]float64
	for _, class := range order {
		start := time.Now()
		op(class, len(times[class]))
		times[class] = append(times[class], float64(time.Since(start)))
	}
	limit := percentile(append(slices.Clone(times[0]), times[1]...), 0.9)
	a, b := below(times[0], limit), below(times[1], limit)
	tv := welchT(a, b)
	t.Logf("fixed %.0f ns, random %.0f ns (means of %d and %d kept), t = %.2f", mean(a), mean(b), len(a), len(b), tv)
	return tv
}

func percentile(xs []float64, p float64) float64 {
	slices.Sort(xs)
	return xs[int(p*float64(len(xs)-1))]
}

func below(xs []float64, limit float64) []float64 {
	var kept []float64
	for _, x := range xs {
		if x <= limit {
			kept = append(kept, x)
		}
	}
	return kept
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func variance(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// welchT is Welch's t statistic of the difference of the means of a and b.
func welchT(a, b []float64) float64 {
	ma, mb := mean(a), mean(b)
	return (ma - mb) / math.Sqrt(variance(a, ma)/float64(len(a))+variance(b, mb)/float64(len(b)))
}
