package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"
)

// PushSubscription is a Web Push subscription of the client API (table
// push_subscriptions): one per access token, as Mastodon keeps them.
type PushSubscription struct {
	ID       int64
	TokenID  int64
	ActorID  int64
	Endpoint string
	P256DH   []byte
	Auth     []byte
	Standard bool
	Alerts   []string // the notification types pushed
	Policy   string   // all, followed, follower, none
	Created  time.Time
}

// Wants reports whether the subscription pushes notifications of typ.
func (s *PushSubscription) Wants(typ string) bool {
	for _, a := range s.Alerts {
		if a == typ {
			return true
		}
	}
	return false
}

const pushColumns = `id, token_id, actor_id, endpoint, p256dh, auth, standard, alerts, policy, created_at`

func scanPush(row rowScanner) (*PushSubscription, error) {
	var s PushSubscription
	var alerts string
	var created int64
	err := row.Scan(&s.ID, &s.TokenID, &s.ActorID, &s.Endpoint, &s.P256DH, &s.Auth, &s.Standard, &alerts, &s.Policy, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if alerts != "" {
		s.Alerts = strings.Split(alerts, ",")
	}
	s.Created = time.UnixMilli(created).UTC()
	return &s, err
}

// SetPushSubscription makes s the subscription of its token, replacing
// the one it had (POST /api/v1/push/subscription), and fills in its id.
func (q *Queries) SetPushSubscription(ctx context.Context, s *PushSubscription) error {
	return q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE token_id = $1`, s.TokenID); err != nil {
			return err
		}
		return tx.w.QueryRowContext(ctx, `INSERT INTO push_subscriptions(token_id, actor_id, endpoint, p256dh, auth, standard, alerts, policy, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`, s.TokenID, s.ActorID, s.Endpoint, s.P256DH, s.Auth, s.Standard,
			strings.Join(s.Alerts, ","), s.Policy, s.Created.UnixMilli()).Scan(&s.ID)
	})
}

// UpdatePushAlerts changes a subscription's alerts and policy (PUT).
func (q *Queries) UpdatePushAlerts(ctx context.Context, id int64, alerts []string, policy string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE push_subscriptions SET alerts = $1, policy = $2 WHERE id = $3`, strings.Join(alerts, ","), policy, id)
		return err
	})
}

// PushSubscriptionOf returns the subscription of a token, or ErrNotFound.
func (q *Queries) PushSubscriptionOf(ctx context.Context, tokenID int64) (*PushSubscription, error) {
	return scanPush(q.r.QueryRowContext(ctx, `SELECT `+pushColumns+` FROM push_subscriptions WHERE token_id = $1`, tokenID))
}

// RemovePushSubscription forgets a subscription (DELETE, or the push
// service said it is gone).
func (q *Queries) RemovePushSubscription(ctx context.Context, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE id = $1`, id)
		return err
	})
}

// PushSubscriptions returns a local actor's subscriptions.
func (q *Queries) PushSubscriptions(ctx context.Context, actorID int64) ([]*PushSubscription, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+pushColumns+` FROM push_subscriptions WHERE actor_id = $1 ORDER BY id`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*PushSubscription
	for rows.Next() {
		s, err := scanPush(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// KindPush is the job that sends a notification's pushes (package jobs
// runs it; QueuePush adds it).
const KindPush = "push"

// QueuePush adds a push job for a local actor's new notification if one
// of its subscriptions pushes notifications of typ: in the transaction
// that made the notification, so the push is as durable as it is.
func (q *Queries) QueuePush(ctx context.Context, actorID, notificationID int64, typ string) error {
	subs, err := column[string](ctx, q.r, `SELECT alerts FROM push_subscriptions WHERE actor_id = $1`, actorID)
	if err != nil {
		return err
	}
	for _, alerts := range subs {
		for _, a := range strings.Split(alerts, ",") {
			if a == typ {
				_, err := q.AddJob(ctx, KindPush, actorID, []byte(`{"notice":`+strconv.FormatInt(notificationID, 10)+`}`))
				return err
			}
		}
	}
	return nil
}

// VAPIDKey returns the instance's VAPID key pair (the private scalar and
// the public key as apps see it), making it with generate on first use;
// when two processes race, both get the one that was stored first.
func (q *Queries) VAPIDKey(ctx context.Context, generate func() (private []byte, public string, err error)) ([]byte, string, error) {
	var priv []byte
	var pub string
	err := q.r.QueryRowContext(ctx, `SELECT private_key, public_key FROM vapid_keys WHERE id = 1`).Scan(&priv, &pub)
	if err == nil {
		return priv, pub, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, "", err
	}
	p, k, err := generate()
	if err != nil {
		return nil, "", err
	}
	err = q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO vapid_keys(id, private_key, public_key, created_at) VALUES (1, $1, $2, $3) ON CONFLICT DO NOTHING`,
			p, k, q.db.Now().UnixMilli())
		if err != nil {
			return err
		}
		return tx.w.QueryRowContext(ctx, `SELECT private_key, public_key FROM vapid_keys WHERE id = 1`).Scan(&priv, &pub)
	})
	return priv, pub, err
}
