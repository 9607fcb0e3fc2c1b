package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/inbox"
	"herald/store"
)

// follows manages follow requests to actors that approve followers by hand.
func (c *cli) follows(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(c.stderr, "herald: follows needs a subcommand: pending, approve or reject")
		return exitUsage
	}
	switch args[0] {
	case "pending":
		return c.followsPending(ctx, args[1:])
	case "approve", "reject":
		return c.followsAnswer(ctx, args[0], args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(c.stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(c.stderr, "herald: unknown follows subcommand %q (want pending, approve or reject)\n", args[0])
		return exitUsage
	}
}

func (c *cli) followsPending(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("follows pending", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald follows pending NAME", func(db *store.DB, pos []string) error {
		a, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		list, err := db.Followers(ctx, a.ID, store.StatePending)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FOLLOWER\tSINCE")
		for _, f := range list {
			fmt.Fprintf(tw, "%s\t%s\n", f.Follower, f.CreatedAt.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	})
}

// followsAnswer approves or rejects a pending follow request and queues the
// Accept or Reject to the follower, in one transaction.
func (c *cli) followsAnswer(ctx context.Context, verb string, args []string) int {
	fs := flag.NewFlagSet("follows "+verb, flag.ContinueOnError)
	var inst instanceFlags
	inst.register(fs)
	path := dbFlag(fs)
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) != 2 {
		err = usageError{fmt.Sprintf("usage: herald follows %s NAME FOLLOWER_ID", verb)}
	}
	if err != nil {
		return c.fail(err)
	}
	in, err := inst.instance()
	if err != nil {
		return c.fail(err)
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	name, follower := pos[0], pos[1]
	a, err := db.ActorByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "herald: no actor named %q\n", name)
		return exitFail
	}
	if err != nil {
		return c.fail(err)
	}
	errNotPending := errors.New("no pending follow request")
	err = db.Write(ctx, func(tx *sql.Tx) error {
		f, err := store.FollowerRow(ctx, tx, a.ID, follower)
		if errors.Is(err, store.ErrNotFound) || (err == nil && f.State != store.StatePending) {
			return errNotPending
		}
		if err != nil {
			return err
		}
		now := db.Now()
		if verb == "approve" {
			if err := store.SetFollowerState(ctx, tx, a.ID, follower, store.StateAccepted); err != nil {
				return err
			}
			return inbox.EnqueueFollowAnswer(ctx, tx, in, a, "Accept", f.FollowID, follower, f.Inbox, now)
		}
		if _, err := store.RemoveFollower(ctx, tx, "", follower, a.ID); err != nil {
			return err
		}
		return inbox.EnqueueFollowAnswer(ctx, tx, in, a, "Reject", f.FollowID, follower, f.Inbox, now)
	})
	if errors.Is(err, errNotPending) {
		fmt.Fprintf(c.stderr, "herald: %s has no pending follow request from %s\n", name, follower)
		return exitFail
	}
	if err != nil {
		return c.fail(err)
	}
	if verb == "approve" {
		fmt.Fprintf(c.stdout, "approved %s (the Accept is queued for delivery)\n", follower)
	} else {
		fmt.Fprintf(c.stdout, "rejected %s (the Reject is queued for delivery)\n", follower)
	}
	return exitOK
}
