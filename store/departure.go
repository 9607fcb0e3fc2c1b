package store

import (
	"context"
	"errors"

	"herald/host"
)

// DepartureInboxes returns one inbox per server the Delete of a local
// actor is to reach: those of KnownInboxes (its followers', the actors it
// follows, everywhere its activities went), then one for every other
// server Herald has cached an actor of (its shared inbox where it has
// one), as Mastodon sends the Delete of an account to Account.inboxes,
// every server it knows, at low priority
// (app/services/delete_account_service.rb, low_priority_delivery_inboxes):
// a server that only ever fetched one of its posts still has a copy.
//
// A cached actor speaks for its own server only: an inbox it names on
// another authority is left out. Its document is the peer's word, and
// with one inbox per server taken, an actor of evil.example naming
// https://victim.example/a would otherwise take victim.example's place
// (its real shared inbox sorts after) and send its Delete nowhere, or
// have Herald POST to any URL a peer likes.
func (q *Queries) DepartureInboxes(ctx context.Context, actorID int64) ([]string, error) {
	known, err := q.KnownInboxes(ctx, actorID)
	if err != nil {
		return nil, err
	}
	byHost := map[string]bool{}
	for _, inbox := range known {
		if h, err := InboxHost(inbox); err == nil {
			byHost[h] = true
		}
	}
	rows, err := q.r.QueryContext(ctx, `SELECT id, CASE WHEN shared_inbox <> '' THEN shared_inbox ELSE inbox END AS box FROM remote_actors
		WHERE inbox <> '' ORDER BY CASE WHEN shared_inbox <> '' THEN 0 ELSE 1 END, box`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, inbox string
		if err := rows.Scan(&id, &inbox); err != nil {
			return nil, err
		}
		h, err := InboxHost(inbox)
		if err != nil || byHost[h] || !host.SameAuthority(inbox, id) {
			continue
		}
		byHost[h] = true
		known = append(known, inbox)
	}
	return known, errors.Join(rows.Err(), rows.Close())
}
