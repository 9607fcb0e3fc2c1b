//go:build rsaz

package rsaz

import (
	"crypto/rsa"
	"math/big"
)

// half is one CRT half, ready for the kernel: the prime, the Montgomery
// constants for R = 2^1040, and the private exponent d mod (prime-1).
type half struct {
	m   nat
	m64 [17]uint64
	k0  uint64 // -m^-1 mod 2^52
	rr  nat    // R^2 mod m
	rrr nat    // R^3 mod m
	d   [16]uint64
}

// Key is an RSA-2048 private key with its precomputed CRT halves. The
// precomputation uses math/big, which is not constant-time; it runs once
// per key (the key's load), not per signature. A shipped version would
// compute it with crypto/internal/fips140/bigmod's constant-time code.
type Key struct {
	priv  *rsa.PrivateKey
	ifma  bool // the kernels can run here
	h     [2]half
	qinvR nat // qinv * R mod p
}

// NewKey prepares priv for Sign. Keys the kernels cannot take (not 2048
// bits, not two primes of 1024 bits each) and CPUs without IFMA are still
// accepted: Sign then uses crypto/rsa.
func NewKey(priv *rsa.PrivateKey) *Key {
	return newKey(priv, hasIFMA())
}

func newKey(priv *rsa.PrivateKey, ifma bool) *Key {
	k := &Key{priv: priv}
	priv.Precompute()
	if len(priv.Primes) != 2 || priv.N.BitLen() != 2048 ||
		priv.Primes[0].BitLen() != 1024 || priv.Primes[1].BitLen() != 1024 ||
		priv.Precomputed.Dp == nil {
		return k
	}
	k.ifma = ifma
	p, q := priv.Primes[0], priv.Primes[1]
	k.h[0] = newHalf(p, priv.Precomputed.Dp)
	k.h[1] = newHalf(q, priv.Precomputed.Dq)
	r := new(big.Int).Lsh(big.NewInt(1), rBits)
	qinvR := new(big.Int).Mul(priv.Precomputed.Qinv, r)
	k.qinvR = natOf(qinvR.Mod(qinvR, p))
	return k
}

// Accelerated reports whether Sign runs the IFMA kernels for this key.
func (k *Key) Accelerated() bool { return k.ifma }

func newHalf(m, d *big.Int) half {
	var h half
	h.m = natOf(m)
	h.m64 = words64(&h.m)
	two52 := new(big.Int).Lsh(big.NewInt(1), 52)
	inv := new(big.Int).ModInverse(new(big.Int).Mod(m, two52), two52)
	h.k0 = (two52.Uint64() - inv.Uint64()) & mask52
	r := new(big.Int).Lsh(big.NewInt(1), rBits)
	rr := new(big.Int).Mul(r, r)
	h.rr = natOf(new(big.Int).Mod(rr, m))
	h.rrr = natOf(rr.Mod(rr.Mul(rr, r), m))
	var db [128]byte
	d.FillBytes(db[:])
	for i := range h.d {
		for j := 0; j < 8; j++ {
			h.d[i] |= uint64(db[127-8*i-j]) << (8 * j)
		}
	}
	return h
}

// natOf converts x (< 2^1040) into limbs.
func natOf(x *big.Int) (out nat) {
	var b [130]byte
	x.FillBytes(b[:])
	limbsFromBytes(out[:limbs], b[:])
	return out
}
