package federation

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"

	"herald/host"
)

// FEP-521a keys of remote actors. Mitra, Fedify, Hubzilla and tootik list
// Multikey objects in the actor's assertionMethod; Mitra and tootik sign
// HTTP requests with the Ed25519 one, its Multikey id as keyId
// (draft-cavage "hs2019" or RFC 9421 alg="ed25519"). Fedify lists its RSA
// key there too, under the same id as in publicKey.

// rsaMulticodec is the unsigned-varint multicodec prefix of rsa-pub
// (0x1205), followed by the PKCS#1 DER of the key.
var rsaMulticodec = []byte{0x85, 0x24}

// multikeyPEMHeader marks, in the cached PEM, a key that came from
// assertionMethod rather than publicKey: a keyId naming only the actor
// resolves to the actor's only publicKey key, as Mastodon's does, and
// Multikeys must not make that ambiguous.
const multikeyPEMHeader = "Herald-Source"

// DecodeMultikey parses a publicKeyMultibase holding an Ed25519 or RSA key.
func DecodeMultikey(s string) (crypto.PublicKey, error) {
	if k, err := DecodeEd25519Multibase(s); err == nil {
		return k, nil
	}
	if len(s) < 2 || s[0] != 'z' {
		return nil, errors.New("multikey: not base58btc")
	}
	b, err := base58Decode(s[1:])
	if err != nil {
		return nil, err
	}
	if len(b) > 2 && b[0] == rsaMulticodec[0] && b[1] == rsaMulticodec[1] {
		k, err := x509.ParsePKCS1PublicKey(b[2:])
		if err != nil {
			return nil, fmt.Errorf("multikey: RSA: %w", err)
		}
		return k, nil
	}
	return nil, errors.New("multikey: neither an Ed25519 nor an RSA public key")
}

// multikeyPEM is the cached form of a Multikey: PKIX, marked as from
// assertionMethod.
func multikeyPEM(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Headers: map[string]string{multikeyPEMHeader: "assertionMethod"}, Bytes: der})), nil
}

// fromAssertionMethod reports whether a cached PEM holds a Multikey.
func fromAssertionMethod(pemText string) bool {
	b, _ := pem.Decode([]byte(pemText))
	return b != nil && b.Headers[multikeyPEMHeader] != ""
}

// parseAssertionMethods adds the actor's Multikeys (FEP-521a) to a.Keys
// and a.KeyIDs, after its publicKey keys. A Multikey must be on the
// actor's host and controlled by the actor; one naming another controller
// is refused like a publicKey with another owner. A Multikey whose id is
// already a publicKey key (Fedify lists its RSA key in both) is that key.
// Referenced (string) entries are listed, to be fetched when used.
func parseAssertionMethods(a *RemoteActor, doc map[string]any, idURL *url.URL) error {
	am := doc["assertionMethod"]
	entries, ok := am.([]any)
	if !ok && am != nil {
		entries = []any{am}
	}
	for _, e := range entries {
		switch e := e.(type) {
		case string:
			if host.SameAuthority(e, idURL.String()) && !a.listsKey(e) {
				a.KeyIDs = append(a.KeyIDs, e)
			}
		case map[string]any:
			kid, _ := e["id"].(string)
			if kid == "" || !host.SameAuthority(kid, idURL.String()) {
				return fmt.Errorf("%w: assertionMethod id %q not on the actor's host", ErrInvalidActor, kid)
			}
			if c := IDOf(e["controller"]); c != "" && c != a.ID {
				return fmt.Errorf("%w: Multikey %s is controlled by %s, not %s", ErrKeyOwner, kid, c, a.ID)
			}
			if a.Key(kid) != nil {
				continue
			}
			if !a.listsKey(kid) {
				a.KeyIDs = append(a.KeyIDs, kid)
			}
			k, err := multikeyOf(e, kid, a.ID)
			if err != nil {
				continue // another type (a DID key, say); other keys may do
			}
			a.Keys = append(a.Keys, k)
		}
	}
	return nil
}

// multikeyOf reads a Multikey object into a RemoteKey.
func multikeyOf(e map[string]any, id, owner string) (*RemoteKey, error) {
	mb := FirstString(e["publicKeyMultibase"])
	if mb == "" {
		return nil, errors.New("multikey: no publicKeyMultibase")
	}
	pub, err := DecodeMultikey(mb)
	if err != nil {
		return nil, err
	}
	pemText, err := multikeyPEM(pub)
	if err != nil {
		return nil, err
	}
	return &RemoteKey{ID: id, Owner: owner, Public: pub, PEM: pemText}, nil
}

// publicKeyCount is how many of a.Keys came from publicKey (they come
// first).
func (a *RemoteActor) publicKeyCount() int {
	n := 0
	for _, k := range a.Keys {
		if !fromAssertionMethod(k.PEM) {
			n++
		}
	}
	return n
}
