package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"herald/store"
)

// SuspensionReversible is how long a local actor's suspension can be
// lifted, as Mastodon keeps a suspended account's data for 30 days before
// deleting it; after that, `herald actor delete` is what is left.
const SuspensionReversible = 30 * 24 * time.Hour

// actorSuspend is `herald actor suspend NAME`: the actor's document is
// served as suspended, its posts and collections answer 403, nothing of
// it is delivered (its queued deliveries wait) and it cannot publish.
func (c *cli) actorSuspend(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor suspend", flag.ContinueOnError)
	reason := fs.String("reason", "", "why (shown in the console)")
	return c.withDB(ctx, fs, args, 1, "usage: herald actor suspend NAME [--reason TEXT]", func(db *store.DB, pos []string) error {
		a, err := db.ActorByName(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no actor named %q", pos[0])
		}
		if err != nil {
			return err
		}
		fresh, err := db.SuspendActor(ctx, a.ID, *reason)
		if err != nil {
			return err
		}
		if !fresh {
			fmt.Fprintf(c.stdout, "%s was suspended already\n", a.Name)
			return nil
		}
		fmt.Fprintf(c.stdout, "suspended %s; `herald actor unsuspend %s` lifts it within 30 days\n", a.Name, a.Name)
		return nil
	})
}

// actorUnsuspend is `herald actor unsuspend NAME`: within 30 days of the
// suspension, everything is served and delivered again.
func (c *cli) actorUnsuspend(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor unsuspend", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald actor unsuspend NAME", func(db *store.DB, pos []string) error {
		a, err := db.ActorByName(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no actor named %q", pos[0])
		}
		if err != nil {
			return err
		}
		s, err := db.ActorSuspensionOf(ctx, a.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%s is not suspended", a.Name)
		}
		if err != nil {
			return err
		}
		if since := db.Now().Sub(s.SuspendedAt); since > SuspensionReversible {
			return fmt.Errorf("%s was suspended %s ago, more than 30 days: it can no longer be lifted (herald actor delete %s --yes removes it)",
				a.Name, since.Round(time.Hour), a.Name)
		}
		if err := db.UnsuspendActor(ctx, a.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "unsuspended %s\n", a.Name)
		return nil
	})
}
