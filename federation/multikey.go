package federation

import (
	"crypto/ed25519"
	"errors"
	"math/big"
)

// FEP-521a publishes an actor's keys as Multikey objects in its
// assertionMethod; an Ed25519 key's publicKeyMultibase is base58btc
// ('z') of the multicodec prefix ed25519-pub (0xed, 0x01) and the 32-byte
// key (W3C Controlled Identifiers §2.2.2, the Multikey format Fedify and
// Mitra read and write).

// MultikeyContext is the JSON-LD context that defines Multikey,
// controller and publicKeyMultibase; DIDContext defines assertionMethod.
// Fedify's actors list both after the security vocabulary, in this order.
const (
	DIDContext      = "https://www.w3.org/ns/did/v1"
	MultikeyContext = "https://w3id.org/security/multikey/v1"
)

var ed25519Multicodec = []byte{0xed, 0x01}

// EncodeEd25519Multibase returns the publicKeyMultibase of an Ed25519
// public key ("z6Mk...").
func EncodeEd25519Multibase(pub ed25519.PublicKey) string {
	return "z" + base58Encode(append(append([]byte{}, ed25519Multicodec...), pub...))
}

// DecodeEd25519Multibase parses a publicKeyMultibase holding an Ed25519
// key; any other key type or encoding is an error.
func DecodeEd25519Multibase(s string) (ed25519.PublicKey, error) {
	if len(s) < 2 || s[0] != 'z' {
		return nil, errors.New("multikey: not base58btc")
	}
	b, err := base58Decode(s[1:])
	if err != nil {
		return nil, err
	}
	if len(b) != 2+ed25519.PublicKeySize || b[0] != ed25519Multicodec[0] || b[1] != ed25519Multicodec[1] {
		return nil, errors.New("multikey: not an Ed25519 public key")
	}
	return ed25519.PublicKey(b[2:]), nil
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58Encode is the Bitcoin base58 encoding: leading zero bytes become
// '1's. Keys are 34 bytes, so big.Int arithmetic is plenty fast.
func base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	var out []byte
	radix, mod := big.NewInt(58), new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

func base58Decode(s string) ([]byte, error) {
	if len(s) > 1024 { // an Ed25519 key is 46 characters, a 4096-bit RSA one about 740
		return nil, errors.New("multikey: too long")
	}
	n, radix := new(big.Int), big.NewInt(58)
	zeros := 0
	for i := 0; i < len(s) && s[i] == '1'; i++ {
		zeros++
	}
	for i := range len(s) {
		d := -1
		for j := range len(base58Alphabet) {
			if base58Alphabet[j] == s[i] {
				d = j
				break
			}
		}
		if d < 0 {
			return nil, errors.New("multikey: not base58")
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}
