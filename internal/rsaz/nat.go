//go:build rsaz

package rsaz

import "math/bits"

// A number as the kernels take it: 20 limbs of 52 bits, least significant
// first, padded with zeros to 24 words (three 512-bit registers).
type nat [24]uint64

const (
	limbs  = 20
	mask52 = 1<<52 - 1
	// rBits is the Montgomery exponent: R = 2^1040.
	rBits = limbs * 52
)

// limbsFromBytes reads the big-endian b into 52-bit limbs, least
// significant first, filling all of out. The loop runs over every byte
// whatever its value.
func limbsFromBytes(out []uint64, b []byte) {
	clear(out)
	for i := range b {
		v := uint64(b[len(b)-1-i])
		bit := i * 8
		w, off := bit/52, bit%52
		if w < len(out) {
			out[w] |= (v << off) & mask52
		}
		if off > 44 && w+1 < len(out) {
			out[w+1] |= v >> (52 - off)
		}
	}
}

// bytesFromLimbs writes the 52-bit limbs x into out big-endian, exactly
// len(out) bytes (higher bits are dropped).
func bytesFromLimbs(out []byte, x []uint64) {
	for i := range out {
		bit := i * 8
		w, off := bit/52, bit%52
		var v uint64
		if w < len(x) {
			v = x[w] >> off
		}
		if off > 44 && w+1 < len(x) {
			v |= x[w+1] << (52 - off)
		}
		out[len(out)-1-i] = byte(v)
	}
}

// words64 converts 20 limbs of 52 bits into 17 words of 64 bits.
func words64(x *nat) (out [17]uint64) {
	for bit := 0; bit < rBits; bit += 52 {
		v := x[bit/52]
		w, off := bit/64, bit%64
		out[w] |= v << off
		if off > 12 && w+1 < len(out) {
			out[w+1] |= v >> (64 - off)
		}
	}
	return out
}

// limbs52 converts 17 words of 64 bits into 20 limbs of 52 bits.
func limbs52(x *[17]uint64) (out nat) {
	for i := 0; i < limbs; i++ {
		bit := i * 52
		w, off := bit/64, bit%64
		v := x[w] >> off
		if off > 12 && w+1 < len(x) {
			v |= x[w+1] << (64 - off)
		}
		out[i] = v & mask52
	}
	return out
}

// condSub sets x = x - m if x >= m, in constant time.
func condSub(x, m *[17]uint64) {
	var d [17]uint64
	var borrow uint64
	for i := range x {
		d[i], borrow = bits.Sub64(x[i], m[i], borrow)
	}
	keep := -borrow // all ones when x < m: keep x
	for i := range x {
		x[i] = x[i]&keep | d[i]&^keep
	}
}

// modSub returns x - y mod m for x, y < m, in constant time.
func modSub(x, y, m *[17]uint64) (out [17]uint64) {
	var borrow, carry uint64
	for i := range x {
		out[i], borrow = bits.Sub64(x[i], y[i], borrow)
	}
	add := -borrow & ^uint64(0)
	for i := range out {
		out[i], carry = bits.Add64(out[i], m[i]&add, carry)
	}
	return out
}

// addNorm returns x + y with the carries propagated to 52-bit limbs.
func addNorm(x, y *nat) (out nat) {
	var carry uint64
	for i := 0; i < limbs; i++ {
		v := x[i] + y[i] + carry
		out[i], carry = v&mask52, v>>52
	}
	return out
}

// mulAdd returns a*b + c as 34 words (a, b, c of 17 words, a*b+c < 2^2048
// for the CRT recombination), schoolbook with math/bits: no data-dependent
// branches.
func mulAdd(a, b, c *[17]uint64) (out [34]uint64) {
	copy(out[:], c[:])
	for i := range a {
		var carry uint64
		for j := range b {
			hi, lo := bits.Mul64(a[i], b[j])
			var c1, c2 uint64
			lo, c1 = bits.Add64(lo, out[i+j], 0)
			lo, c2 = bits.Add64(lo, carry, 0)
			out[i+j] = lo
			carry = hi + c1 + c2
		}
		out[i+len(b)] += carry
	}
	return out
}
