package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// generateEd25519PEM makes an Ed25519 key pair: PKCS#8 and PKIX PEM.
func generateEd25519PEM() (privPEM, pubPEM string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", "", err
	}
	pder, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder})), nil
}

// ensureEd25519Keys gives every actor without an Ed25519 key one (the
// actors created before migration 0081). Each update applies only while
// the key is still missing, so processes opening the database at once
// cannot replace a key another already published.
func (db *DB) ensureEd25519Keys(ctx context.Context) error {
	ids, err := column[int64](ctx, db.w, `SELECT id FROM actors WHERE ed25519_private_key_pem = ''`)
	if err != nil || len(ids) == 0 {
		return err
	}
	return db.Write(ctx, func(tx *Tx) error {
		for _, id := range ids {
			priv, pub, err := generateEd25519PEM()
			if err != nil {
				return err
			}
			if _, err := tx.w.ExecContext(ctx, `UPDATE actors SET ed25519_private_key_pem = $1, ed25519_public_key_pem = $2
				WHERE id = $3 AND ed25519_private_key_pem = ''`, priv, pub, id); err != nil {
				return fmt.Errorf("actor %d: Ed25519 key: %w", id, err)
			}
		}
		return nil
	})
}
