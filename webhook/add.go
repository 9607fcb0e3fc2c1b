package webhook

import (
	"context"
	"errors"
	"fmt"

	"herald/store"
)

// ErrTooMany is Add's answer for an actor that has MaxPerActor webhooks.
var ErrTooMany = fmt.Errorf("an actor has at most %d webhooks; remove one first", MaxPerActor)

// Add registers an endpoint for a local actor's events with a new secret,
// as `herald webhook add`, the app API and the console do: url passed
// CheckURL and events came from ParseEvents. It refuses a webhook past
// MaxPerActor (ErrTooMany) and returns the webhook with its secret, which
// the caller shows once: only the scheduler reads it again.
func Add(ctx context.Context, db *store.DB, actorID int64, url string, events []string) (*store.Webhook, string, error) {
	if err := CheckURL(url); err != nil {
		return nil, "", err
	}
	if len(events) == 0 {
		return nil, "", errors.New("no events")
	}
	existing, err := db.Webhooks(ctx, actorID)
	if err != nil {
		return nil, "", err
	}
	if len(existing) >= MaxPerActor {
		return nil, "", ErrTooMany
	}
	secret := NewSecret()
	w, err := db.AddWebhook(ctx, actorID, url, events, secret)
	return w, secret, err
}
