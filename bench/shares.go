package bench

import (
	"bytes"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// Shares are the fractions of a CPU profile's samples (by CPU time) that
// went to signing, to the garbage collector and to allocation. A sample
// counts for a share when any frame of its stack is one of that share's
// functions; each sample counts at most once per share, and the shares
// are disjoint because a sample is given to the first that matches, in
// the order signing, GC, allocation (an assist inside a signature's
// allocation is GC; a signature's own mallocgc is signing).
type Shares struct {
	Samples int64   // CPU time in the profile, nanoseconds
	Sign    float64 // crypto/rsa.SignPKCS1v15, crypto/ed25519.Sign (or PrivateKey.Sign, which signature.Sign calls), any herald/internal/rsaz function (a build with the tag rsaz), and what they call
	GC      float64 // runtime.gcBgMarkWorker, runtime.gcAssistAlloc*, runtime.bgsweep, runtime.bgscavenge, runtime.gcStart, runtime.gcMarkTermination
	Malloc  float64 // runtime.mallocgc (and its callees) not counted above: allocation itself
}

// signFuncs are the signing entry points, whichever scheme calls them.
var signFuncs = []string{"crypto/rsa.SignPKCS1v15", "crypto/ed25519.Sign", "crypto/ed25519.PrivateKey.Sign"}

// rsazPrefix begins the name of every function of the IFMA prototype
// (signature.SignRSASHA256 in a build with the tag rsaz): its entry point,
// its Go helpers and its assembly kernels are all signing.
const rsazPrefix = "herald/internal/rsaz."

// gcFuncs are the collector's roots on the stack: its background mark
// workers, the mark work a goroutine is made to do when it allocates
// (assists), background sweeping and scavenging, and the cycle's start
// and end.
var gcFuncs = []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcStart", "runtime.gcMarkTermination"}

// ProfileShares reads a CPU profile (runtime/pprof's output) and returns
// its shares.
func ProfileShares(r io.Reader) (Shares, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return Shares{}, err
	}
	idx := len(p.SampleType) - 1 // cpu, nanoseconds
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	var total, sign, gc, malloc int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		switch {
		case stackHas(s, signFuncs, false) || stackHas(s, []string{rsazPrefix}, true):
			sign += v
		case stackHas(s, gcFuncs, true):
			gc += v
		case stackHas(s, []string{"runtime.mallocgc"}, true):
			malloc += v
		}
	}
	sh := Shares{Samples: total}
	if total > 0 {
		sh.Sign, sh.GC, sh.Malloc = float64(sign)/float64(total), float64(gc)/float64(total), float64(malloc)/float64(total)
	}
	return sh, nil
}

// stackHas reports whether a frame of s is one of names (or, with prefix,
// begins with one: runtime.gcAssistAlloc1, runtime.mallocgcSmallNoscan).
func stackHas(s *profile.Sample, names []string, prefix bool) bool {
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			for _, n := range names {
				if ln.Function.Name == n || prefix && strings.HasPrefix(ln.Function.Name, n) {
					return true
				}
			}
		}
	}
	return false
}

// profileTee is where a window's CPU profile goes: the caller's writer,
// if any, and a buffer for the shares.
type profileTee struct {
	buf bytes.Buffer
	out io.Writer
}

func (t *profileTee) Write(b []byte) (int, error) {
	t.buf.Write(b)
	if t.out != nil {
		return t.out.Write(b)
	}
	return len(b), nil
}
