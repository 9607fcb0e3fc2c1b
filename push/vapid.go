package push

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"time"
)

// VAPID is the instance's application server key pair (RFC 8292): push
// services accept messages for a subscription only with a token signed
// by the key the subscription was made with, the public key apps get as
// the instance's vapid_key.
type VAPID struct {
	key *ecdsa.PrivateKey
}

// NewVAPID makes a new key pair.
func NewVAPID() (*VAPID, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &VAPID{key: k}, nil
}

// ParseVAPID reads a key pair from its private scalar (Private's form).
func ParseVAPID(private []byte) (*VAPID, error) {
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), private)
	if err != nil {
		return nil, err
	}
	return &VAPID{key: k}, nil
}

// Private is the private scalar, 32 bytes: what the database keeps.
func (v *VAPID) Private() []byte {
	b, _ := v.key.Bytes()
	return b
}

// Public is the public key as the 65-byte uncompressed point.
func (v *VAPID) Public() []byte {
	b, _ := v.key.PublicKey.Bytes()
	return b
}

// PublicKey is the public key as Mastodon shows it to apps (vapid_key):
// URL-safe base64 with its padding, as Ruby's urlsafe_encode64 writes it.
func (v *VAPID) PublicKey() string { return base64.URLEncoding.EncodeToString(v.Public()) }

// tokenLife is how long a VAPID token is good for (RFC 8292 2: at most 24
// hours; Mastodon's webpush gem signs for 12).
const tokenLife = 12 * time.Hour

// Authorization is the Authorization header for a message to endpoint
// (RFC 8292 3): "vapid t=JWT, k=KEY", the token's audience the endpoint's
// origin and its subject contact (the instance's URL).
func (v *VAPID) Authorization(endpoint, contact string, now time.Time) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", errors.New("push endpoint is not a URL")
	}
	header, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "ES256"})
	claims, _ := json.Marshal(map[string]any{"aud": u.Scheme + "://" + u.Host, "exp": now.Add(tokenLife).Unix(), "sub": contact})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, v.key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64) // JWS ES256: r and s, 32 bytes each (RFC 7518 3.4)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signing + "." + enc.EncodeToString(sig) + ", k=" + enc.EncodeToString(v.Public()), nil
}
