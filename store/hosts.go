package store

import (
	"context"
	"database/sql"
	"time"
)

// RecordInbound notes, inside the inbox transaction, that host (host[:port])
// just sent a correctly signed request: evidence that it is alive, which the
// delivery scheduler's unavailable-domain tracker reads.
func RecordInbound(ctx context.Context, tx *sql.Tx, host string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO hosts(host, last_inbound_at) VALUES (?, ?)
		ON CONFLICT(host) DO UPDATE SET last_inbound_at = excluded.last_inbound_at`, host, now.Unix())
	return err
}
