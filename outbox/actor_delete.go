package outbox

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// DeleteActor deletes a local actor for good: its token stops working, its
// follows go, its documents answer 410, and a Delete of the actor is queued
// in the low-priority lane to every inbox it is known at (followers, the
// actors it follows, everyone its activities went to). The wide fan-out
// never delays the normal lane. The actor's row and key stay, to sign that
// Delete; its name is never reused.
func (p *Publisher) DeleteActor(ctx context.Context, actor *store.Actor) (*Result, error) {
	now := p.Now().UTC()
	id := p.Instance.ActorID(actor.Name)
	iri := id + "#delete"
	body, err := marshal(map[string]any{
		"@context":  "https://www.w3.org/ns/activitystreams",
		"id":        iri,
		"type":      "Delete",
		"actor":     id,
		"object":    id,
		"to":        []string{federation.Public},
		"published": now.Format(time.RFC3339),
	})
	if err != nil {
		return nil, err
	}
	res := &Result{}
	err = p.DB.Write(ctx, func(tx *sql.Tx) error {
		inboxes, err := store.KnownInboxes(ctx, tx, actor.ID)
		if err != nil {
			return err
		}
		out := store.OutActivity{IRI: iri, Type: "Delete", ActorID: actor.ID, Body: body, Lane: store.LaneLow, ObjectIRI: id, Public: true}
		if res.Queued, err = p.Runner.Enqueue(ctx, tx, out, delivery.Audience{Inboxes: inboxes}, now); err != nil {
			return err
		}
		if err := store.MarkActorDeleted(ctx, tx, actor.ID, now); errors.Is(err, store.ErrNotFound) {
			return inputErr("%s is already deleted", actor.Name)
		} else if err != nil {
			return err
		}
		res.Activity, err = store.ActivityTx(ctx, tx, iri)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.Runner.Wake()
	return res, nil
}
