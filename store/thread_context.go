package store

import "context"

// SetObjectContext records the conversation (FEP-7888 context IRI) a local
// object belongs to.
func (q *Queries) SetObjectContext(ctx context.Context, objectID int64, contextIRI string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE objects SET context = $1 WHERE id = $2`, contextIRI, objectID)
		return err
	})
}

// ContextObjects lists the public, not deleted local objects of a
// conversation, oldest first, after the object id afterID (0 for the
// first page), at most limit. A local reply waiting for a peer's
// approval is not listed (notUnapproved), as it is served nowhere else.
func (q *Queries) ContextObjects(ctx context.Context, contextIRI string, afterID int64, limit int) ([]Object, error) {
	return q.objects(ctx, `SELECT `+objectColumns+` FROM objects WHERE context = $1 AND id > $2
		AND public AND deleted_at IS NULL
		AND `+notUnapproved+` ORDER BY id LIMIT $3`, contextIRI, afterID, limit)
}
