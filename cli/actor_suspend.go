package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"herald/jobs"
	"herald/store"
)

// actorSuspend is `herald actor suspend NAME`: the actor's document is
// served as suspended, its posts and collections answer 403, nothing of
// it is delivered (its queued deliveries wait) and it cannot publish; an
// Update of its suspended document tells its followers' servers (a job,
// as Mastodon's SuspendAccountService sends one). Unless lifted, the
// server deletes it for good store.SuspensionRetention (30 days) later.
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
		// The Update is queued with the suspension: a failure after it
		// cannot leave the actor suspended unannounced.
		fresh, job, err := jobs.SuspendActor(ctx, db, a.ID, *reason)
		if err != nil {
			return err
		}
		s, err := db.ActorSuspensionOf(ctx, a.ID)
		if err != nil {
			return err
		}
		if !fresh {
			fmt.Fprintf(c.stdout, "%s was suspended already; it is deleted for good on %s unless `herald actor unsuspend %s` lifts it before\n",
				a.Name, stamp(s.DeletionDue()), a.Name)
			return nil
		}
		fmt.Fprintf(c.stdout, "suspended %s; it is deleted for good on %s unless `herald actor unsuspend %s` lifts it before\n",
			a.Name, stamp(s.DeletionDue()), a.Name)
		return c.announceActor(ctx, db, job, "the suspension")
	})
}

// announceActor waits for the job that sends an Update of the actor's
// document as it is now served to its followers' servers, queued with
// the suspension or its lifting (in force already, whether or not a
// server is running).
func (c *cli) announceActor(ctx context.Context, db *store.DB, job int64, what string) error {
	return c.awaitJob(ctx, db, job, func(res sent) {
		fmt.Fprintf(c.stdout, "%s is announced: %s %s\n", what, res.Type, res.Activity)
		c.printQueued(res)
	})
}

// actorUnsuspend is `herald actor unsuspend NAME`: before the deletion
// date, everything is served and delivered again, the deletion is called
// off, and an Update of the whole document tells the followers' servers
// (as Mastodon's UnsuspendAccountService does).
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
		if since := db.Now().Sub(s.SuspendedAt); since > store.SuspensionRetention {
			return fmt.Errorf("%s was suspended %s ago, more than 30 days: it can no longer be lifted, and the server deletes it for good",
				a.Name, since.Round(time.Hour))
		}
		job, err := jobs.UnsuspendActor(ctx, db, a.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%s is not suspended", a.Name) // lifted meanwhile, and announced then
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "unsuspended %s; its deletion on %s is called off\n", a.Name, stamp(s.DeletionDue()))
		return c.announceActor(ctx, db, job, "the lifting")
	})
}
