//go:build rsaz && amd64

package signature

import (
	"crypto"
	"crypto/rsa"
	"sync"

	"herald/internal/rsaz"
)

// RSAKernel names what SignRSASHA256 signs with in this build: the
// AVX-512 IFMA prototype internal/rsaz, not shipped (docs/PERFORMANCE.md,
// "RSA-2048 in AVX-512 IFMA assembly"); crypto/rsa in a default build.
const RSAKernel = "rsaz"

// ownCavageRSA: draft-cavage RSA signatures are built in cavagersa.go, so
// that their RSA operation is SignRSASHA256's and not httpsig's call of
// rsa.SignPKCS1v15.
const ownCavageRSA = true

// SignRSASHA256 signs digest, a SHA-256 sum, with RSASSA-PKCS1-v1_5 by
// priv. In this build it signs with internal/rsaz: the same bytes as
// rsa.SignPKCS1v15 (the scheme is deterministic), in the IFMA kernels
// when the CPU has them and the key is RSA-2048 with two 1024-bit
// primes, through crypto/rsa otherwise. A signature that fails rsaz's own
// verification (a fault, or a bug in the prototype) is made again by
// crypto/rsa rather than lost.
func SignRSASHA256(priv *rsa.PrivateKey, digest []byte) ([]byte, error) {
	if sig, err := rsazKey(priv).SignPKCS1v15SHA256(digest); err == nil {
		return sig, nil
	}
	return rsa.SignPKCS1v15(nil, priv, crypto.SHA256, digest)
}

// rsazKeys holds the prepared form of each private key that signed, by
// its modulus: the delivery key cache parses an actor's PEM again every
// minute (a new *rsa.PrivateKey each time), and the preparation (math/big
// Montgomery constants, a few hundred µs) must not be paid per signature.
// An entry is used only for a key Equal to the one it was prepared from.
var rsazKeys struct {
	mu sync.RWMutex
	m  map[string]rsazEntry
}

type rsazEntry struct {
	priv *rsa.PrivateKey
	key  *rsaz.Key
}

// maxRSAZKeys bounds rsazKeys (a few KB an entry): past it the map is
// emptied and refilled by the keys still signing, one preparation each.
const maxRSAZKeys = 1024

// rsazKey returns priv's prepared key, preparing it on first use. Safe
// for concurrent use; two goroutines may prepare the same key at once,
// and one of the results is kept.
func rsazKey(priv *rsa.PrivateKey) *rsaz.Key {
	n := string(priv.N.Bytes())
	rsazKeys.mu.RLock()
	e, ok := rsazKeys.m[n]
	rsazKeys.mu.RUnlock()
	if ok && (e.priv == priv || e.priv.Equal(priv)) {
		return e.key
	}
	e = rsazEntry{priv: priv, key: rsaz.NewKey(priv)}
	rsazKeys.mu.Lock()
	if rsazKeys.m == nil || len(rsazKeys.m) >= maxRSAZKeys {
		rsazKeys.m = make(map[string]rsazEntry)
	}
	rsazKeys.m[n] = e
	rsazKeys.mu.Unlock()
	return e.key
}
