//go:build rsaz

package rsaz

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"strings"
	"testing"
)

func needIFMA(t testing.TB) {
	if !hasIFMA() {
		t.Skip("no AVX-512 IFMA on this CPU")
	}
}

func bigOf(x *nat) *big.Int {
	var b [130]byte
	bytesFromLimbs(b[:], x[:limbs])
	return new(big.Int).SetBytes(b[:])
}

// TestAMMAgainstBig checks the kernel's result against a*b/R mod m with
// math/big, for random odd 1024-bit moduli and operands below 2m, and that
// the result stays below 2m (the almost-Montgomery bound the
// exponentiation relies on).
func TestAMMAgainstBig(t *testing.T) {
	needIFMA(t)
	rnd := mrand.New(mrand.NewPCG(1, 2))
	r := new(big.Int).Lsh(big.NewInt(1), rBits)
	randBelow := func(limit *big.Int) *big.Int {
		b := make([]byte, 130)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return new(big.Int).Mod(new(big.Int).SetBytes(b), limit)
	}
	top := new(big.Int).Lsh(big.NewInt(1), 1023)
	for iter := range 500 {
		var ms, as, bs [2]*big.Int
		var m, a, b pair
		var k0 [2]uint64
		for h := range 2 {
			ms[h] = randBelow(top)
			ms[h].Or(ms[h], top).SetBit(ms[h], 0, 1)
			twoM := new(big.Int).Lsh(ms[h], 1)
			as[h], bs[h] = randBelow(twoM), randBelow(twoM)
			if iter%7 == 0 { // the extremes: 2m-1 and 0
				as[h].Sub(twoM, big.NewInt(1))
				bs[h].Sub(twoM, big.NewInt(1))
			}
			if iter%11 == 0 {
				as[h].SetInt64(0)
			}
			hh := newHalf(ms[h], big.NewInt(3))
			mn, an, bn := natOf(ms[h]), natOf(as[h]), natOf(bs[h])
			copy(m[24*h:], mn[:])
			copy(a[24*h:], an[:])
			copy(b[24*h:], bn[:])
			k0[h] = hh.k0
		}
		var out pair
		amm52x20x2(&out, &a, &b, &m, &k0)
		for h := range 2 {
			got := out.half(h)
			g := bigOf(&got)
			rinv := new(big.Int).ModInverse(r, ms[h])
			want := new(big.Int).Mul(as[h], bs[h])
			want.Mul(want, rinv).Mod(want, ms[h])
			if new(big.Int).Mod(g, ms[h]).Cmp(want) != 0 {
				t.Fatalf("iter %d half %d: a*b/R mod m wrong", iter, h)
			}
			if g.Cmp(new(big.Int).Lsh(ms[h], 1)) >= 0 {
				t.Fatalf("iter %d half %d: result not below 2m", iter, h)
			}
			for i, w := range got {
				if w > mask52 || (i >= limbs && w != 0) {
					t.Fatalf("iter %d half %d: limb %d not normalised: %x", iter, h, i, w)
				}
			}
		}
	}
}

// keys generates n RSA-2048 keys; key generation is the slow part of
// these tests, so each key signs many messages.
func keys(t testing.TB, n int) []*rsa.PrivateKey {
	out := make([]*rsa.PrivateKey, n)
	for i := range out {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = k
	}
	return out
}

// swapped returns priv with its primes in the other order, so that both
// p > q and p < q reach the CRT recombination whatever GenerateKey gave.
func swapped(t testing.TB, priv *rsa.PrivateKey) *rsa.PrivateKey {
	s := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: priv.D,
		Primes: []*big.Int{priv.Primes[1], priv.Primes[0]}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s.Precompute()
	return s
}

// TestSignMatchesCryptoRSA: byte-identical signatures to
// rsa.SignPKCS1v15 on random keys (each with its primes in both orders)
// and messages, and the edge digests (all zeros, all ones).
func TestSignMatchesCryptoRSA(t *testing.T) {
	needIFMA(t)
	n := 12
	if testing.Short() {
		n = 3
	}
	var all []*rsa.PrivateKey
	for _, priv := range keys(t, n) {
		all = append(all, priv, swapped(t, priv))
	}
	for ki, priv := range all {
		k := NewKey(priv)
		if !k.Accelerated() {
			t.Fatalf("key %d: not accelerated on an IFMA CPU", ki)
		}
		digests := [][]byte{make([]byte, 32), bytes.Repeat([]byte{0xff}, 32)}
		for i := range 20 {
			d := sha256.Sum256([]byte{byte(ki), byte(i)})
			digests = append(digests, d[:])
		}
		for i, d := range digests {
			want, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.SignPKCS1v15SHA256(d)
			if err != nil {
				t.Fatalf("key %d digest %d: %v", ki, i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("key %d digest %d: signature differs from crypto/rsa", ki, i)
			}
		}
	}
}

// TestDecryptEdgeCases runs the raw CRT exponentiation on the edge inputs
// and exponents crypto/rsa's signing never produces: c = 0, 1, N-1, and
// CRT exponents with all bits set or only the top one, against math/big.
func TestDecryptEdgeCases(t *testing.T) {
	needIFMA(t)
	priv := keys(t, 1)[0]
	p, q := priv.Primes[0], priv.Primes[1]
	nMinus1 := new(big.Int).Sub(priv.N, big.NewInt(1))
	inputs := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), nMinus1, p, q}
	pm1, qm1 := new(big.Int).Sub(p, big.NewInt(1)), new(big.Int).Sub(q, big.NewInt(1))
	exps := [][2]*big.Int{
		{priv.Precomputed.Dp, priv.Precomputed.Dq},
		{big.NewInt(1), big.NewInt(1)},
		{big.NewInt(0), big.NewInt(0)},
		{new(big.Int).Sub(pm1, big.NewInt(1)), new(big.Int).Sub(qm1, big.NewInt(1))},
		{new(big.Int).Lsh(big.NewInt(1), 1022), new(big.Int).Lsh(big.NewInt(1), 1021)},
	}
	for ei, e := range exps {
		k := NewKey(priv)
		k.h[0] = newHalf(p, e[0])
		k.h[1] = newHalf(q, e[1])
		for ci, c := range inputs {
			var cb [256]byte
			c.FillBytes(cb[:])
			out := make([]byte, 256)
			k.decrypt(out, &cb)
			mp := new(big.Int).Exp(c, e[0], p)
			mq := new(big.Int).Exp(c, e[1], q)
			got := new(big.Int).SetBytes(out)
			if new(big.Int).Mod(got, p).Cmp(mp) != 0 || new(big.Int).Mod(got, q).Cmp(mq) != 0 || got.Cmp(priv.N) >= 0 {
				t.Errorf("exponents %d, input %d: wrong CRT result", ei, ci)
			}
		}
	}
}

// TestFallbackWithoutIFMA: a key made as on a CPU without IFMA signs
// through crypto/rsa, with the same bytes; and hasIFMA agrees with the
// kernel's flags in /proc/cpuinfo where Linux gives them.
func TestFallbackWithoutIFMA(t *testing.T) {
	priv := keys(t, 1)[0]
	k := newKey(priv, false)
	if k.Accelerated() {
		t.Fatal("a key for a CPU without IFMA claims the kernels")
	}
	d := sha256.Sum256([]byte("fallback"))
	want, _ := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, d[:])
	got, err := k.SignPKCS1v15SHA256(d[:])
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("fallback signature differs (%v)", err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if NewKey(small).Accelerated() {
		t.Error("a 1024-bit key claims the 2048-bit kernels")
	}
	if _, err := k.SignPKCS1v15SHA256(d[:20]); err == nil {
		t.Error("a 20-byte digest was signed as SHA-256")
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	flags := string(info)
	want1 := strings.Contains(flags, " avx512ifma") && strings.Contains(flags, " avx512f ")
	if hasIFMA() != want1 {
		t.Errorf("hasIFMA() = %v, /proc/cpuinfo says %v", hasIFMA(), want1)
	}
}

// TestFaultIsCaught: a wrong CRT exponent (as a fault in the
// exponentiation would give) makes Sign return ErrVerify and no bytes,
// the check that keeps a faulty half from revealing a factor of N.
func TestFaultIsCaught(t *testing.T) {
	needIFMA(t)
	priv := keys(t, 1)[0]
	d := sha256.Sum256([]byte("fault"))
	for h := range 2 {
		k := NewKey(priv)
		k.h[h].d[3] ^= 1 << 17
		sig, err := k.SignPKCS1v15SHA256(d[:])
		if !errors.Is(err, ErrVerify) || sig != nil {
			t.Errorf("half %d: a faulty exponent gave %v and %d bytes", h, err, len(sig))
		}
	}
}
