package babyjub

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestScalarConstants(t *testing.T) {
	if got := limbsToBig((*[4]uint64)(&orderL)); got.Cmp(bigL) != 0 {
		t.Fatalf("orderL = %v", got)
	}
	r := new(big.Int).Lsh(big.NewInt(1), 256)
	if got, want := limbsToBig((*[4]uint64)(&r2)), new(big.Int).Exp(r, big.NewInt(2), bigL); got.Cmp(want) != 0 {
		t.Errorf("r2 = %v, want %v", got, want)
	}
	if got, want := limbsToBig((*[4]uint64)(&r3)), new(big.Int).Exp(r, big.NewInt(3), bigL); got.Cmp(want) != 0 {
		t.Errorf("r3 = %v, want %v", got, want)
	}
	inv := new(big.Int).ModInverse(bigL, new(big.Int).Lsh(big.NewInt(1), 64))
	neg := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), inv)
	if neg.Uint64() != lNegInv {
		t.Errorf("lNegInv = %#x, want %#x", uint64(lNegInv), neg.Uint64())
	}
	if got := limbsToBig(&modulusP); got.Cmp(bigP) != 0 {
		t.Errorf("modulusP = %v", got)
	}
}

// randomWide returns 64 random bytes biased toward edge values.
func randomWide(rng *rand.Rand) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	switch rng.IntN(4) {
	case 0:
		for i := range b {
			b[i] = 0xff
		}
	case 1:
		clear(b[32:])
	}
	return b
}

func TestScalarFromWideBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := randomWide(rng)
		got := scalarFromWideBytes(b)
		want := new(big.Int).Mod(leBytesToBig(b), bigL)
		if limbsToBig((*[4]uint64)(&got)).Cmp(want) != 0 {
			t.Fatalf("reduce %x: got %v want %v", b, limbsToBig((*[4]uint64)(&got)), want)
		}
	}
	// L itself, L−1 and L+1 (as 256-bit inputs).
	for _, d := range []int64{-1, 0, 1} {
		v := new(big.Int).Add(bigL, big.NewInt(d))
		b := make([]byte, 32)
		v.FillBytes(b)
		le := make([]byte, 32)
		for i := range b {
			le[i] = b[31-i]
		}
		got := scalarFromWideBytes(le)
		if want := new(big.Int).Mod(v, bigL); limbsToBig((*[4]uint64)(&got)).Cmp(want) != 0 {
			t.Errorf("L%+d: got %v", d, limbsToBig((*[4]uint64)(&got)))
		}
	}
}

func TestScalarMulAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lMinus1 := new(big.Int).Sub(bigL, big.NewInt(1))
	for i := 0; i < 2000; i++ {
		vals := make([]*big.Int, 3)
		for j := range vals {
			if rng.IntN(5) == 0 {
				vals[j] = lMinus1
			} else {
				vals[j] = leBytesToBig(randomWide(rng))
			}
		}
		a, b, c := scalarFromBig(vals[0]), scalarFromBig(vals[1]), scalarFromBig(vals[2])
		got := scalarMulAdd(&a, &b, &c)
		want := new(big.Int).Mul(vals[1], vals[2])
		want.Add(want, vals[0]).Mod(want, bigL)
		if limbsToBig((*[4]uint64)(&got)).Cmp(want) != 0 {
			t.Fatalf("%v + %v·%v: got %v want %v", vals[0], vals[1], vals[2], limbsToBig((*[4]uint64)(&got)), want)
		}
	}
}

func TestScalarCanonicalBytes(t *testing.T) {
	for _, tc := range []struct {
		v  *big.Int
		ok bool
	}{
		{big.NewInt(0), true},
		{new(big.Int).Sub(bigL, big.NewInt(1)), true},
		{bigL, false},
		{new(big.Int).Add(bigL, big.NewInt(1)), false},
		{new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)), false},
	} {
		be := tc.v.FillBytes(make([]byte, 32))
		le := make([]byte, 32)
		for i := range be {
			le[i] = be[31-i]
		}
		var s scalar
		err := s.setCanonicalBytes(le)
		if (err == nil) != tc.ok {
			t.Errorf("%v: err = %v, want ok = %v", tc.v, err, tc.ok)
		}
		if err == nil {
			if limbsToBig((*[4]uint64)(&s)).Cmp(tc.v) != 0 {
				t.Errorf("%v: decoded %v", tc.v, limbsToBig((*[4]uint64)(&s)))
			}
			if b := s.bytes(); string(b[:]) != string(le) {
				t.Errorf("%v: bytes round trip %x", tc.v, b)
			}
		}
	}
}
