//go:build rsaz && amd64

package signature

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// cpuHasIFMA reads the kernel's CPU flags, independently of rsaz's CPUID
// check.
func cpuHasIFMA(t *testing.T) bool {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	s := string(info)
	return strings.Contains(s, " avx512ifma") && strings.Contains(s, " avx512f ")
}

// TestRSAZPrepared: in this build an RSA-2048 key signs in the IFMA
// kernels where the CPU has them, is prepared once, and the same key
// parsed again (the delivery key cache re-reads it every minute) finds
// that preparation instead of making another.
func TestRSAZPrepared(t *testing.T) {
	if RSAKernel != "rsaz" {
		t.Fatalf("RSAKernel %q in the rsaz build", RSAKernel)
	}
	priv := testRSA(t)
	d := sha256.Sum256([]byte("prepared"))
	if _, err := SignRSASHA256(priv, d[:]); err != nil {
		t.Fatal(err)
	}
	k := rsazKey(priv)
	if k.Accelerated() != cpuHasIFMA(t) {
		t.Fatalf("Accelerated() = %v, /proc/cpuinfo says IFMA %v", k.Accelerated(), cpuHasIFMA(t))
	}
	again, err := x509.ParsePKCS1PrivateKey(x509.MarshalPKCS1PrivateKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	if again == priv || rsazKey(again) != k {
		t.Fatal("the same key parsed again was prepared again")
	}
}

// TestRSAZOtherSizes: keys the kernels do not take sign through
// crypto/rsa, with its bytes.
func TestRSAZOtherSizes(t *testing.T) {
	for _, bits := range []int{1024, 3072} {
		priv, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256([]byte(fmt.Sprint(bits)))
		got, err := SignRSASHA256(priv, d[:])
		if err != nil {
			t.Fatal(err)
		}
		want, _ := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, d[:])
		if string(got) != string(want) {
			t.Fatalf("%d bits: not crypto/rsa's signature", bits)
		}
		if rsazKey(priv).Accelerated() {
			t.Fatalf("%d bits: claims the kernels", bits)
		}
	}
}

// TestRSAZConcurrent: goroutines signing with keys being prepared at the
// same time all get crypto/rsa's bytes (run it with -race).
func TestRSAZConcurrent(t *testing.T) {
	base := testRSA(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half share the fixture, half parse it anew, so the
			// cache is filled and hit from both sides.
			priv := base
			if i%2 == 1 {
				priv, _ = x509.ParsePKCS1PrivateKey(x509.MarshalPKCS1PrivateKey(base))
			}
			d := sha256.Sum256([]byte{byte(i)})
			got, err := SignRSASHA256(priv, d[:])
			want, _ := rsa.SignPKCS1v15(nil, base, crypto.SHA256, d[:])
			if err != nil || string(got) != string(want) {
				errs <- fmt.Errorf("goroutine %d: %v, or not crypto/rsa's bytes", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
