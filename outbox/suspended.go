package outbox

import (
	"context"
	"errors"

	"herald/store"
)

// ErrActorSuspended is Publish's answer for an actor the operator
// suspended (`herald actor suspend`): it publishes nothing until the
// suspension is lifted. It is an InputError, so every caller refuses the
// request with its message (the outbox's own routes answer 403 before).
var ErrActorSuspended error = &InputError{Msg: "the actor is suspended: it publishes nothing until `herald actor unsuspend` lifts it"}

// refuseSuspended returns ErrActorSuspended for a suspended actor.
func (p *Publisher) refuseSuspended(ctx context.Context, actor *store.Actor) error {
	_, err := p.DB.ActorSuspensionOf(ctx, actor.ID)
	switch {
	case err == nil:
		return ErrActorSuspended
	case errors.Is(err, store.ErrNotFound):
		return nil
	}
	return err
}

// suspendedContext is the term a suspended actor's document adds to its
// @context (Mastodon's ActorSerializer: toot:suspended).
var suspendedContext = map[string]any{"toot": "http://joinmastodon.org/ns#", "suspended": "toot:suspended"}

// SuspendedActorDocument is a suspended actor's document made from its
// ActorDocument: what a server needs to address and verify it, and
// `suspended: true`, without the profile (summary, avatar, header,
// fields, featured; the name is the preferredUsername), as Mastodon's
// ActorSerializer leaves them out of a suspended account's. The server
// serves it, and the Update that announces a suspension carries it.
func SuspendedActorDocument(doc map[string]any) map[string]any {
	out := map[string]any{"suspended": true}
	for _, k := range []string{"@context", "id", "type", "preferredUsername", "inbox", "outbox", "followers", "following",
		"endpoints", "publicKey", "assertionMethod", "url", "published", "manuallyApprovesFollowers"} {
		if v, ok := doc[k]; ok {
			out[k] = v
		}
	}
	out["name"] = doc["preferredUsername"]
	ctx, _ := out["@context"].([]any)
	out["@context"] = append(append([]any(nil), ctx...), suspendedContext)
	return out
}
