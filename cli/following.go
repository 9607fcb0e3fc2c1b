package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/store"
)

// following lists whom an actor follows: herald following --as NAME
func (c *cli) following(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("following", flag.ContinueOnError)
	as := fs.String("as", "", "the local actor")
	return c.withDB(ctx, fs, args, 0, "usage: herald following --as NAME", func(db *store.DB, _ []string) error {
		actor, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		list, err := db.FollowingOf(ctx, actor.ID)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TARGET\tSTATE\tFOLLOW")
		for _, g := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Target, g.State, g.FollowID)
		}
		return tw.Flush()
	})
}
