//go:build rsaz

package rsaz

// The assembly kernels in amm_amd64.s.

//go:noescape
func amm52x20x2(out, a, b, m *pair, k0 *[2]uint64)

//go:noescape
func selectEntry(out *[24]uint64, table *[32][24]uint64, idx uint64)

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

// hasIFMA reports whether the CPU has AVX-512F and AVX-512 IFMA and the OS
// saves the ZMM and opmask state (XCR0 bits 1, 2, 5, 6, 7); without all of
// them the kernels would fault, so Sign falls back to crypto/rsa.
func hasIFMA() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(1<<27) == 0 { // OSXSAVE
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx512f, avx512ifma = 1 << 16, 1 << 21
	return ebx7&avx512f != 0 && ebx7&avx512ifma != 0
}
