package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"herald/store"
	"herald/webfinger"
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

// checkTarget accepts what the server can resolve: @user@host, user@host
// or an http(s) actor URL. Only the form is checked here; the server does
// the lookup.
func checkTarget(flagName, target string) error {
	if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://") {
		return nil
	}
	if _, _, err := webfinger.ParseHandle(target); err != nil {
		return usageError{fmt.Sprintf("invalid %s %q: want @user@host or an actor URL", flagName, target)}
	}
	return nil
}
