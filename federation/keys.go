package federation

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// RSAKeyBits is the size of the keys Herald generates. Mastodon generates
// 2048-bit keys and every server verifies them quickly; larger keys only make
// fan-out signing slower.
const RSAKeyBits = 2048

// GenerateKeyPEM creates an RSA key pair and returns it PEM-encoded: the
// private key as PKCS#8 ("PRIVATE KEY") and the public key as PKIX
// ("PUBLIC KEY"), the form Mastodon serves in publicKeyPem.
func GenerateKeyPEM() (privPEM, pubPEM string, err error) {
	k, err := rsa.GenerateKey(rand.Reader, RSAKeyBits)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return "", "", err
	}
	privPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	pubPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	return privPEM, pubPEM, nil
}

// ParsePrivateKeyPEM parses a PKCS#8 or PKCS#1 private key (RSA or Ed25519).
func ParsePrivateKeyPEM(s string) (crypto.Signer, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("private key: no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		switch k := k.(type) {
		case *rsa.PrivateKey:
			return k, nil
		case ed25519.PrivateKey:
			return k, nil
		default:
			return nil, fmt.Errorf("private key: unsupported type %T", k)
		}
	}
	k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	return k, nil
}

// ParsePublicKeyPEM parses a public key as remote servers publish it in
// publicKeyPem: PKIX ("PUBLIC KEY") or PKCS#1 ("RSA PUBLIC KEY"), RSA or
// Ed25519.
func ParsePublicKeyPEM(s string) (crypto.PublicKey, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("public key: no PEM block")
	}
	if k, err := x509.ParsePKIXPublicKey(b.Bytes); err == nil {
		switch k := k.(type) {
		case *rsa.PublicKey, ed25519.PublicKey:
			return k, nil
		default:
			return nil, fmt.Errorf("public key: unsupported type %T", k)
		}
	}
	k, err := x509.ParsePKCS1PublicKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	return k, nil
}
