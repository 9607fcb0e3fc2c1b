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
// answers are what approving and rejecting send and say.
var answers = map[string]struct{ activity, done string }{
	"approve": {"Accept", "approved"},
	"reject":  {"Reject", "rejected"},
}

func (c *cli) followsAnswer(ctx context.Context, verb string, args []string) int {
	fs := flag.NewFlagSet("follows "+verb, flag.ContinueOnError)
	var inst instanceFlags
	inst.register(fs)
	usage := fmt.Sprintf("usage: herald follows %s NAME FOLLOWER_ID", verb)
	return c.withDB(ctx, fs, args, 2, usage, func(db *store.DB, pos []string) error {
		in, err := inst.instance()
		if err != nil {
			return err
		}
		name, follower := pos[0], pos[1]
		a, err := asActor(ctx, db, name)
		if err != nil {
			return err
		}
		err = db.Write(ctx, func(tx *sql.Tx) error {
			f, err := store.FollowerRow(ctx, tx, a.ID, follower)
			if errors.Is(err, store.ErrNotFound) || (err == nil && f.State != store.StatePending) {
				return fmt.Errorf("%s has no pending follow request from %s", name, follower)
			}
			if err != nil {
				return err
			}
			if verb == "approve" {
				err = store.SetFollowerState(ctx, tx, a.ID, follower, store.StateAccepted)
			} else {
				_, err = store.RemoveFollower(ctx, tx, "", follower, a.ID)
			}
			if err != nil {
				return err
			}
			return inbox.EnqueueFollowAnswer(ctx, tx, in, a, answers[verb].activity, f.FollowID, follower, f.Inbox, db.Now())
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s %s (the %s is queued for delivery)\n", answers[verb].done, follower, answers[verb].activity)
		return nil
	})
}
