package cli

import (
	"context"
	"errors"
	"fmt"

	"herald/jobs"
	"herald/store"
)

// asActor loads the --as actor.
func asActor(ctx context.Context, db *store.DB, name string) (*store.Actor, error) {
	if name == "" {
		return nil, usageError{"--as NAME is required: the local actor to act as"}
	}
	a, err := db.ActorByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no actor named %q", name)
	}
	return a, err
}

// checkTarget is jobs.CheckTarget as a usage error naming the flag.
func checkTarget(flagName, target string) error {
	if err := jobs.CheckTarget(target); err != nil {
		return usageError{fmt.Sprintf("invalid %s %q: %v", flagName, target, err)}
	}
	return nil
}
