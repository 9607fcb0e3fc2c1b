package bench

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"herald/federation/signature"
)

// procStatus returns a field of /proc/self/status in bytes (for kB fields),
// 0 when unavailable.
func procStatus(field string) uint64 { return procStatusFile("/proc/self/status", field) }

// procStatusOf is procStatus for another process (a child).
func procStatusOf(pid int, field string) uint64 {
	return procStatusFile("/proc/"+strconv.Itoa(pid)+"/status", field)
}

func procStatusFile(path, field string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			return 0
		}
		n, _ := strconv.ParseUint(fs[0], 10, 64)
		return n * 1024
	}
	return 0
}

// PeakRSS is the process's peak resident set (VmHWM) since start or since
// the last ResetPeakRSS.
func PeakRSS() uint64 { return procStatus("VmHWM") }

// RSS is the process's resident set now (VmRSS).
func RSS() uint64 { return procStatus("VmRSS") }

// ResetPeakRSS returns freed heap to the OS and then resets VmHWM to the
// current RSS (Linux: "5" to /proc/self/clear_refs), so that the next
// PeakRSS covers only what follows. It reports whether the reset worked;
// if not, PeakRSS stays the process lifetime's peak.
func ResetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// Signing is a measurement of the machine's raw RSA-2048 signing speed.
type Signing struct {
	PerSecond float64       // signatures per second on all cores
	CPU       time.Duration // process CPU time per signature
}

// SigningRate measures the machine's raw RSA-2048 signing rate: PKCS #1
// v1.5 signatures of a SHA-256 digest, on GOMAXPROCS goroutines for d. It
// is the floor under every delivery, which signs once, so it signs as the
// deliveries do: through signature.SignRSASHA256, crypto/rsa or (a build
// with the tag rsaz) internal/rsaz.
func SigningRate(d time.Duration) (Signing, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return Signing{}, err
	}
	digest := sha256.Sum256([]byte(strings.Repeat("(request-target): post /inbox\nhost: h0001.farm.test\n", 6)))
	var n atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	cpu0 := CPUTime()
	start := time.Now()
	deadline := start.Add(d)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := signature.SignRSASHA256(key, digest[:]); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	el, cpu := time.Since(start), CPUTime()-cpu0
	if n.Load() == 0 {
		return Signing{}, firstErr
	}
	return Signing{PerSecond: float64(n.Load()) / el.Seconds(), CPU: cpu / time.Duration(n.Load())}, firstErr
}

// cores is how many goroutines SigningRate signs on.
func cores() int { return runtime.GOMAXPROCS(0) }
