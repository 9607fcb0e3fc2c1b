//go:build !rsaz || !amd64

package signature

import (
	"crypto"
	"crypto/rsa"
)

// RSAKernel names what SignRSASHA256 signs with in this build: crypto/rsa
// ("rsaz" in a build with the tag rsaz on amd64, signer_rsaz.go).
const RSAKernel = "crypto/rsa"

// ownCavageRSA: draft-cavage RSA signatures go through httpsig, which
// signs with crypto/rsa, as SignRSASHA256 does in this build.
const ownCavageRSA = false

// SignRSASHA256 signs digest, a SHA-256 sum, with RSASSA-PKCS1-v1_5 by
// priv. Every RSA signature Herald makes of a request (and of an LD
// signature) goes through it, so that one build tag can change the
// implementation; in this build it is rsa.SignPKCS1v15, whose random
// source is ignored for this scheme.
func SignRSASHA256(priv *rsa.PrivateKey, digest []byte) ([]byte, error) {
	return rsa.SignPKCS1v15(nil, priv, crypto.SHA256, digest)
}
