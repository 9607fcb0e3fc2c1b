//go:build rsaz

package rsaz

import (
	"crypto"
	"crypto/rsa"
	"errors"
)

// sha256Prefix is the DER DigestInfo header for SHA-256 (RFC 8017,
// section 9.2, note 1).
var sha256Prefix = []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}

// ErrVerify means the signature computed did not verify with the public
// key (a fault, or a bug); it is never returned with a signature.
var ErrVerify = errors.New("rsaz: signature failed its own verification")

// SignPKCS1v15SHA256 is rsa.SignPKCS1v15(nil, priv, crypto.SHA256, hashed)
// for the key k: the same bytes (PKCS #1 v1.5 is deterministic). Like
// crypto/rsa it checks the signature with the public key before returning
// it, so a fault in the exponentiation cannot leak a factor of N.
func (k *Key) SignPKCS1v15SHA256(hashed []byte) ([]byte, error) {
	if len(hashed) != 32 {
		return nil, errors.New("rsaz: hashed is not a SHA-256 digest")
	}
	if !k.ifma {
		return rsa.SignPKCS1v15(nil, k.priv, crypto.SHA256, hashed)
	}
	var em [256]byte
	em[1] = 1
	tLen := len(sha256Prefix) + 32
	for i := 2; i < 256-tLen-1; i++ {
		em[i] = 0xff
	}
	copy(em[256-tLen:], sha256Prefix)
	copy(em[256-32:], hashed)
	sig := make([]byte, 256)
	k.decrypt(sig, &em)
	if err := rsa.VerifyPKCS1v15(&k.priv.PublicKey, crypto.SHA256, hashed, sig); err != nil {
		return nil, ErrVerify
	}
	return sig, nil
}

// decrypt sets out = c^d mod N by CRT, both halves in the IFMA kernels.
func (k *Key) decrypt(out []byte, c *[256]byte) {
	var m, rr, rrr pair
	m.set(&k.h[0].m, &k.h[1].m)
	rr.set(&k.h[0].rr, &k.h[1].rr)
	rrr.set(&k.h[0].rrr, &k.h[1].rrr)
	k0 := [2]uint64{k.h[0].k0, k.h[1].k0}

	// c = c1*R + c0, c0 < R: c*R mod m = c1*R^2 + c0*R, two Montgomery
	// multiplications, no division by the secret primes.
	var cl [40]uint64
	limbsFromBytes(cl[:], c[:])
	var c0, c1 nat
	copy(c0[:limbs], cl[:limbs])
	copy(c1[:limbs], cl[limbs:])
	var lo, hi, base pair
	lo.set(&c0, &c0)
	hi.set(&c1, &c1)
	amm52x20x2(&lo, &lo, &rr, &m, &k0)
	amm52x20x2(&hi, &hi, &rrr, &m, &k0)
	for i := range 2 {
		l, h := lo.half(i), hi.half(i)
		s := addNorm(&l, &h)
		copy(base[24*i:], s[:])
	}

	acc := expPair(&base, k)
	var one pair
	one[0], one[24] = 1, 1
	amm52x20x2(&acc, &acc, &one, &m, &k0) // out of Montgomery form, <= m

	a0, a1 := acc.half(0), acc.half(1)
	m1, m2 := words64(&a0), words64(&a1)
	condSub(&m1, &k.h[0].m64)
	condSub(&m2, &k.h[1].m64)

	// h = qinv*(m1 - m2) mod p; s = m2 + h*q.
	m2p := m2
	condSub(&m2p, &k.h[0].m64) // q may exceed p; m2 < q < 2p
	diff := modSub(&m1, &m2p, &k.h[0].m64)
	dn := limbs52(&diff)
	var x, qi pair
	x.set(&dn, &dn)
	qi.set(&k.qinvR, &k.qinvR)
	amm52x20x2(&x, &x, &qi, &m, &k0) // half 0: diff*qinv mod p, < 2p
	xh := x.half(0)
	h := words64(&xh)
	condSub(&h, &k.h[0].m64)
	s := mulAdd(&h, &k.h[1].m64, &m2)
	for i := range 32 {
		w := s[i]
		for j := range 8 {
			out[255-8*i-j] = byte(w >> (8 * j))
		}
	}
}
