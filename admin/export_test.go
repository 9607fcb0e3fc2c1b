package admin

import (
	"context"

	"herald/store"
)

// SetActorPasswordStore stands in for the client API's store of log-in
// passwords (store.DB.SetActorPassword, not on this branch yet) so the
// tests can drive the password form end to end; nil takes it away again.
func SetActorPasswordStore(f func(db *store.DB, ctx context.Context, actorID int64, hash string) error) {
	setActorPassword = f
}
