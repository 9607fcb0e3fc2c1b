package push

import (
	"crypto/ecdh"
	"encoding/binary"
	"errors"
)

// Decrypt is the user agent's side of Encrypt (RFC 8291 3.4 read back):
// the plaintext of a one-record aes128gcm body for the subscription whose
// private key and auth secret are given. Herald sends and never receives
// pushes; the tests read what it sent with this.
func Decrypt(body []byte, ua *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("body too short")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idlen || rs < 18 {
		return nil, errors.New("bad header")
	}
	asPublic, record := body[21:21+idlen], body[21+idlen:]
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, err
	}
	shared, err := ua.ECDH(as)
	if err != nil {
		return nil, err
	}
	gcm, nonce, err := contentKey(shared, auth, ua.PublicKey().Bytes(), asPublic, salt)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, err
	}
	// Strip the padding: zeros after the delimiter 2 of the last record.
	for i := len(plain) - 1; i >= 0; i-- {
		switch plain[i] {
		case 0:
			continue
		case 2:
			return plain[:i], nil
		}
		break
	}
	return nil, errors.New("no last-record delimiter")
}
