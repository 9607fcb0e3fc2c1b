package store

import (
	"context"
)

// SetActorKeys replaces a live local actor's key pair inside tx (a key
// rotation): from the commit on, its actor document serves only the new
// public key and its deliveries are signed with the new private key. The
// old pair is gone. Its Ed25519 pair is replaced by a fresh one as well: a
// rotation answers a leaked database, which leaked both. It returns
// ErrNotFound for an unknown or deleted actor.
func (q *Queries) SetActorKeys(ctx context.Context, id int64, privPEM, pubPEM string) error {
	return q.write(ctx, func(tx *Tx) error {
		edPriv, edPub, err := generateEd25519PEM()
		if err != nil {
			return err
		}
		res, err := tx.w.ExecContext(ctx, `UPDATE actors SET private_key_pem = $1, public_key_pem = $2, ed25519_private_key_pem = $4, ed25519_public_key_pem = $5
		WHERE id = $3 AND deleted_at IS NULL`, privPEM, pubPEM, id, edPriv, edPub)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}
