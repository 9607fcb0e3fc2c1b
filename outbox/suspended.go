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
