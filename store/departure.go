package store

import (
	"context"
	"errors"
	"slices"

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
//
// The accepted relays are left out: the Delete reaches each at its relay
// inbox (delivery.Audience.Relays, which its caller sets), and a relay
// whose cached actor names another shared inbox would get it twice. So an
// inbox that is a relay's is dropped, and a relay's server gets no inbox
// from the cache, as a server already reached gets none.
func (q *Queries) DepartureInboxes(ctx context.Context, actorID int64) ([]string, error) {
	known, err := q.KnownInboxes(ctx, actorID)
	if err != nil {
		return nil, err
	}
	relays, err := q.RelayInboxes(ctx)
	if err != nil {
		return nil, err
	}
	byHost := map[string]bool{}
	for _, inbox := range relays {
		if h, err := InboxHost(inbox); err == nil {
			byHost[h] = true
		}
	}
	known = slices.DeleteFunc(known, func(inbox string) bool { return slices.Contains(relays, inbox) })
	for _, inbox := range known {
		if h, err := InboxHost(inbox); err == nil {
			byHost[h] = true
		}
	}
	// One pass, no sort in the database (the cache can hold hundreds of
	// thousands of actors, read inside the deletion's transaction): per
	// server the first shared inbox, else the first personal one, by name.
	type pick struct {
		inbox  string
		shared bool
	}
	best := map[string]pick{}
	rows, err := q.r.QueryContext(ctx, `SELECT id, CASE WHEN shared_inbox <> '' THEN shared_inbox ELSE inbox END, shared_inbox <> '' FROM remote_actors
		WHERE inbox <> ''`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, inbox string
		var shared bool
		if err := rows.Scan(&id, &inbox, &shared); err != nil {
			return nil, err
		}
		h, err := InboxHost(inbox)
		if err != nil || byHost[h] {
			continue
		}
		if b, ok := best[h]; ok && (b.shared && !shared || b.shared == shared && b.inbox <= inbox) {
			continue
		}
		if host.SameAuthority(inbox, id) {
			best[h] = pick{inbox, shared}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	others := make([]string, 0, len(best))
	for _, b := range best {
		others = append(others, b.inbox)
	}
	slices.Sort(others)
	return append(known, others...), nil
}
