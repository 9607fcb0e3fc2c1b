package jobs

import (
	"context"
	"fmt"
	"slices"

	"herald/host"
	"herald/outbox"
	"herald/store"
)

// move moves actor to the account args.Target names (herald actor move).
// The target is fetched now from its own server, never taken from a cache
// or from what the operator typed, and must list actor in alsoKnownAs:
// Mastodon's app/models/account_migration.rb (validate_target_account)
// refuses a move otherwise, as it refuses a move to itself or to where the
// account already moved.
func (r *Runner) move(ctx context.Context, actor *store.Actor, args Args, finish outbox.Options) error {
	target, err := r.remoteActorID(ctx, args.Target)
	if err != nil {
		return err
	}
	if target == actor.MovedTo {
		return fmt.Errorf("%s has moved to %s already", actor.Name, target)
	}
	remote, err := r.Publisher.Fetcher.RefreshActor(ctx, target)
	if err != nil {
		return fmt.Errorf("could not fetch %s: %w", target, err)
	}
	self := r.Publisher.Instance.ActorID(actor.Name)
	if !slices.Contains(remote.AlsoKnownAs, self) {
		return fmt.Errorf("%s does not list %s in alsoKnownAs: add it as an alias on the new account first", remote.ID, self)
	}
	_, err = r.Publisher.MoveActor(ctx, actor, remote.ID, finish)
	return err
}

// alias adds (or, with args.Remove, takes away) an account elsewhere in
// actor's alsoKnownAs, so that it may move here (herald actor alias), and
// sends the Update of the actor to its followers in the same transaction.
// An alias to add must be an actor its server serves.
func (r *Runner) alias(ctx context.Context, actor *store.Actor, args Args, finish outbox.Options) error {
	id, err := r.remoteActorID(ctx, args.Target)
	if err != nil {
		return err
	}
	has := slices.Contains(actor.AlsoKnownAs, id)
	aliases := slices.Clone(actor.AlsoKnownAs)
	switch {
	case args.Remove && !has:
		return fmt.Errorf("%s is not an alias of %s", id, actor.Name)
	case args.Remove:
		aliases = slices.DeleteFunc(aliases, func(a string) bool { return a == id })
	default:
		remote, err := r.Publisher.Fetcher.RefreshActor(ctx, id)
		if err != nil {
			return fmt.Errorf("could not fetch %s: %w", id, err)
		}
		if slices.Contains(aliases, remote.ID) {
			return fmt.Errorf("%s is an alias of %s already", remote.ID, actor.Name)
		}
		aliases = append(aliases, remote.ID)
	}
	updated := *actor
	updated.AlsoKnownAs = aliases
	_, err = r.Publisher.UpdateActor(ctx, &updated, outbox.Options{InTx: func(ctx context.Context, tx *store.Tx, res *outbox.Result) error {
		if err := tx.SetAliases(ctx, actor.ID, aliases); err != nil {
			return err
		}
		return finish.InTx(ctx, tx, res)
	}})
	return err
}

// remoteActorID resolves what the operator typed (@user@host or an actor
// URL) to the id of an actor on another server.
func (r *Runner) remoteActorID(ctx context.Context, target string) (string, error) {
	id, err := r.resolve(ctx, target)
	if err != nil {
		return "", err
	}
	if host.AuthorityOf(id) == host.AuthorityOf(r.Publisher.Instance.Base()) {
		return "", fmt.Errorf("%s is on this server: an account moves to or from another server", target)
	}
	return id, nil
}
