package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"text/tabwriter"

	"herald/jobs"
	"herald/store"
)

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
			fmt.Fprintf(tw, "%s\t%s\n", f.Follower, stamp(f.CreatedAt))
		}
		return tw.Flush()
	})
}

// followsApprove is `herald follows approve NAME FOLLOWER_ID`.
func (c *cli) followsApprove(ctx context.Context, args []string) int {
	return c.followsAnswer(ctx, "approve", args)
}

// followsReject is `herald follows reject NAME FOLLOWER_ID`.
func (c *cli) followsReject(ctx context.Context, args []string) int {
	return c.followsAnswer(ctx, "reject", args)
}

// followsAnswer approves or rejects a pending follow request: the server
// changes the follower's state and queues the Accept or Reject in one
// transaction.
func (c *cli) followsAnswer(ctx context.Context, verb string, args []string) int {
	fs := flag.NewFlagSet("follows "+verb, flag.ContinueOnError)
	usage := fmt.Sprintf("usage: herald follows %s NAME FOLLOWER_ID", verb)
	kind := map[string]string{"approve": jobs.KindApprove, "reject": jobs.KindReject}[verb]
	return c.withDB(ctx, fs, args, 2, usage, func(db *store.DB, pos []string) error {
		name, follower := pos[0], pos[1]
		a, err := asActor(ctx, db, name)
		if err != nil {
			return err
		}
		// Checked here too, so a typo is told at once even with no server.
		pending, err := db.Followers(ctx, a.ID, store.StatePending)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(pending, func(f store.Follower) bool { return f.Follower == follower }) {
			return fmt.Errorf("%s has no pending follow request from %s", name, follower)
		}
		return c.runJob(ctx, db, kind, a, jobs.Args{Follower: follower}, func(res sent) {
			fmt.Fprintf(c.stdout, "%s %s: %s %s\n", map[string]string{"approve": "approved", "reject": "rejected"}[verb], follower, res.Type, res.Activity)
			c.printQueued(res)
		})
	})
}
