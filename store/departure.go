package store

import "context"

// DepartureInboxes returns one inbox per server the Delete of a local
// actor is to reach: those of KnownInboxes (its followers', the actors it
// follows, everywhere its activities went), then one for every other
// server Herald has cached an actor of (its shared inbox where it has
// one), as Mastodon sends the Delete of an account to Account.inboxes,
// every server it knows, at low priority
// (app/services/delete_account_service.rb, low_priority_delivery_inboxes):
// a server that only ever fetched one of its posts still has a copy.
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
	others, err := column[string](ctx, q.r, `SELECT CASE WHEN shared_inbox <> '' THEN shared_inbox ELSE inbox END AS box FROM remote_actors
		WHERE inbox <> '' ORDER BY CASE WHEN shared_inbox <> '' THEN 0 ELSE 1 END, box`)
	if err != nil {
		return nil, err
	}
	for _, inbox := range others {
		h, err := InboxHost(inbox)
		if err != nil || byHost[h] {
			continue
		}
		byHost[h] = true
		known = append(known, inbox)
	}
	return known, nil
}
