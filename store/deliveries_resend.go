package store

import "context"

// RequeueDelivered queues again every delivery to host that was counted
// done (done rows are kept DoneRetention), for a host that answered before
// it verified and dropped what it could not verify: what Herald sent it
// under a signature rule that trusted a 2xx. Receivers deduplicate by id,
// so what did arrive is not shown twice. So that the resent rows can
// arrive in any order (four at a time go to one host), an activity that
// was undone since is left out (its Undo is resent), and so is anything
// about an object deleted since but the Delete itself. It returns how many
// rows it requeued.
func (q *Queries) RequeueDelivered(ctx context.Context, host string) (n int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', attempts = 0, next_at = $1, updated_at = $1
			WHERE state = 'done' AND host = $2 AND activity_id IN (
				SELECT a.id FROM activities a
				WHERE NOT EXISTS (SELECT 1 FROM activities u WHERE u.type = 'Undo' AND u.object_iri = a.iri)
				AND (a.type = 'Delete' OR NOT EXISTS (SELECT 1 FROM objects o WHERE o.iri = a.object_iri AND o.deleted_at IS NOT NULL)))`,
			q.db.Now().UnixMilli(), host)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
