//go:build rsaz

package rsaz

// pair is the two CRT halves' operands side by side, the layout
// amm52x20x2 takes: half 0 in words 0-23, half 1 in words 24-47.
type pair [48]uint64

func (p *pair) set(a, b *nat) {
	copy(p[:24], a[:])
	copy(p[24:], b[:])
}

func (p *pair) half(i int) (out nat) {
	copy(out[:], p[24*i:24*i+24])
	return out
}

const window = 5

// windowBits returns bits [pos, pos+width) of the 1024-bit exponent d. The
// positions are public (the same for every key and message).
func windowBits(d *[16]uint64, pos, width int) uint64 {
	w, off := pos/64, pos%64
	v := d[w] >> off
	if off+width > 64 && w+1 < len(d) {
		v |= d[w+1] << (64 - off)
	}
	return v & (1<<width - 1)
}

// expPair returns base[h]^d[h] mod m[h] for both halves, in Montgomery
// form (times R), almost reduced (< 2m). base is in Montgomery form. Fixed
// window of 5 bits: 1024 = 4 + 204*5 bits, every window squares five times
// and multiplies by a table entry chosen with selectEntry, whatever the
// exponent's bits are.
func expPair(base *pair, k *Key) pair {
	var m pair
	m.set(&k.h[0].m, &k.h[1].m)
	k0 := [2]uint64{k.h[0].k0, k.h[1].k0}
	var tables [2][32][24]uint64
	var one, rr, t pair
	one[0], one[24] = 1, 1
	rr.set(&k.h[0].rr, &k.h[1].rr)
	amm52x20x2(&t, &rr, &one, &m, &k0) // R mod m: Montgomery 1
	store(&tables, 0, &t)
	store(&tables, 1, base)
	t = *base
	for i := 2; i < 32; i++ {
		amm52x20x2(&t, &t, base, &m, &k0)
		store(&tables, i, &t)
	}
	const top = 1024 - 204*window
	var acc, sel pair
	lookup(&acc, &tables, windowBits(&k.h[0].d, 1024-top, top), windowBits(&k.h[1].d, 1024-top, top))
	for pos := 1024 - top - window; pos >= 0; pos -= window {
		for range window {
			amm52x20x2(&acc, &acc, &acc, &m, &k0)
		}
		lookup(&sel, &tables, windowBits(&k.h[0].d, pos, window), windowBits(&k.h[1].d, pos, window))
		amm52x20x2(&acc, &acc, &sel, &m, &k0)
	}
	return acc
}

func store(tables *[2][32][24]uint64, i int, p *pair) {
	copy(tables[0][i][:], p[:24])
	copy(tables[1][i][:], p[24:])
}

func lookup(out *pair, tables *[2][32][24]uint64, i0, i1 uint64) {
	selectEntry((*[24]uint64)(out[:24]), &tables[0], i0)
	selectEntry((*[24]uint64)(out[24:]), &tables[1], i1)
}
