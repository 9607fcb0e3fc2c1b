package delivery

import (
	"context"
	"time"

	"herald/store"
)

// EnqueueMore queues a stored activity (a.IRI) again, with its body now
// a.Body, for aud: the inboxes that had no delivery of it get one, judged
// by the federation policy as Enqueue judges them (those it refuses are
// left out, not recorded). An interaction a peer's
// author approved goes to its whole audience this way, under the id the
// approval names (outbox, AnswerOutbound).
func (r *Runner) EnqueueMore(ctx context.Context, tx *store.Tx, a store.OutActivity, aud Audience, now time.Time) (store.EnqueueResult, error) {
	body, err := StripBlindRecipients(a.Body)
	if err != nil {
		return store.EnqueueResult{}, err
	}
	inboxes, _, _, _, err := r.audienceInboxes(ctx, tx, a, aud, now)
	if err != nil {
		return store.EnqueueResult{}, err
	}
	return tx.ExtendActivity(ctx, a.IRI, body, inboxes, a.Lane, now)
}
