//go:build rsaz

package rsaz

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"syscall"
	"testing"
	"time"
)

// cpuTime reports the process's user+system CPU time per operation as
// cpu-ns/op, the divisor openssl speed uses by default: on two cores
// shared with other builds, wall time per operation measures the load.
func cpuTime(b *testing.B) func() {
	read := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := read()
	return func() {
		b.ReportMetric(float64(read()-start)/float64(b.N), "cpu-ns/op")
	}
}

// The three benchmarks sign the same digest with the same key: crypto/rsa,
// this package's IFMA kernels, and the raw CRT exponentiation without the
// verification that SignPKCS1v15SHA256 (like crypto/rsa) does after it.

func BenchmarkCryptoRSASign(b *testing.B) {
	priv := keys(b, 1)[0]
	d := sha256.Sum256([]byte("benchmark"))
	defer cpuTime(b)()
	for b.Loop() {
		if _, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, d[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRSAZSign(b *testing.B) {
	needIFMA(b)
	k := NewKey(keys(b, 1)[0])
	d := sha256.Sum256([]byte("benchmark"))
	defer cpuTime(b)()
	for b.Loop() {
		if _, err := k.SignPKCS1v15SHA256(d[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRSAZDecryptOnly(b *testing.B) {
	needIFMA(b)
	k := NewKey(keys(b, 1)[0])
	var c [256]byte
	c[200] = 7
	out := make([]byte, 256)
	defer cpuTime(b)()
	for b.Loop() {
		k.decrypt(out, &c)
	}
}

func BenchmarkAMM52x20x2(b *testing.B) {
	needIFMA(b)
	var x, m pair
	for i := 0; i < limbs; i++ {
		x[i], x[24+i], m[i], m[24+i] = mask52/3, mask52/5, mask52, mask52
	}
	k0 := [2]uint64{1, 1}
	defer cpuTime(b)()
	for b.Loop() {
		amm52x20x2(&x, &x, &x, &m, &k0)
	}
}

func BenchmarkSelectEntry(b *testing.B) {
	needIFMA(b)
	var table [32][24]uint64
	var out [24]uint64
	defer cpuTime(b)()
	for b.Loop() {
		selectEntry(&out, &table, 17)
	}
}
