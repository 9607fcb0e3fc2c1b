package push

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
)

// recordSize is the rs of the single record Herald sends (RFC 8188 2.1):
// RFC 8291's example uses 4096; one record holds any payload Mastodon
// sends.
const recordSize = 4096

// MaxPayload is the most plaintext one message carries: a record of
// recordSize less the padding delimiter and the 16-byte tag. Push
// services take at least 4096 bytes of body (RFC 8030 7.2), and the
// header takes 86 of them, so Herald keeps the plaintext to 3,993.
const MaxPayload = recordSize - 86 - 16 - 1

// Keys are a subscription's keys as the browser gave them (RFC 8291 3.2):
// its P-256 public key (the 65-byte uncompressed point, p256dh) and the
// 16-byte authentication secret (auth).
type Keys struct {
	P256DH []byte
	Auth   []byte
}

// Check reports whether the keys have the shapes RFC 8291 requires.
func (k Keys) Check() error {
	if _, err := ecdh.P256().NewPublicKey(k.P256DH); err != nil {
		return errors.New("p256dh is not a P-256 public key")
	}
	if len(k.Auth) != 16 {
		return errors.New("auth is not 16 bytes")
	}
	return nil
}

// Encrypt encrypts plaintext for the subscriber with a fresh key pair and
// salt: the message body, aes128gcm (RFC 8291 3.4, RFC 8188 2).
func Encrypt(plaintext []byte, k Keys) ([]byte, error) {
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	return encrypt(plaintext, k, as, salt)
}

// encrypt is Encrypt with the application server's key pair and the salt
// given (RFC 8291 appendix A's test vector fixes both).
func encrypt(plaintext []byte, k Keys, as *ecdh.PrivateKey, salt []byte) ([]byte, error) {
	if len(plaintext) > MaxPayload {
		return nil, errors.New("push payload too large")
	}
	ua, err := ecdh.P256().NewPublicKey(k.P256DH)
	if err != nil {
		return nil, errors.New("p256dh is not a P-256 public key")
	}
	shared, err := as.ECDH(ua)
	if err != nil {
		return nil, err
	}
	asPublic := as.PublicKey().Bytes()

	gcm, nonce, err := contentKey(shared, k.Auth, k.P256DH, asPublic, salt)
	if err != nil {
		return nil, err
	}
	// The header (salt, rs, idlen, keyid: the server's public key), then
	// the one record: the plaintext and the last-record delimiter 2.
	out := make([]byte, 0, 16+4+1+len(asPublic)+len(plaintext)+1+gcm.Overhead())
	out = append(out, salt...)
	out = binary.BigEndian.AppendUint32(out, recordSize)
	out = append(out, byte(len(asPublic)))
	out = append(out, asPublic...)
	record := append(append([]byte{}, plaintext...), 2)
	return gcm.Seal(out, nonce, record, nil), nil
}

// contentKey derives the record's cipher and nonce from the ECDH shared
// secret, the auth secret, both public keys and the salt: RFC 8291 3.3
// (the input keying material, both keys in its info) and RFC 8188 2.2
// and 2.3 (the content encryption key and the nonce).
func contentKey(shared, auth, uaPublic, asPublic, salt []byte) (cipher.AEAD, []byte, error) {
	keyInfo := append(append([]byte("WebPush: info\x00"), uaPublic...), asPublic...)
	ikm, err := hkdf.Expand(sha256.New, hmacSHA256(auth, shared), string(keyInfo), 32)
	if err != nil {
		return nil, nil, err
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, nil, err
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, nil, err
	}
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, nil, err
	}
	gcm, err := cipher.NewGCM(block)
	return gcm, nonce, err
}

func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}
