package cli

import (
	"context"
	"flag"
	"fmt"

	"herald/jobs"
	"herald/store"
)

// follow sends a Follow: herald follow --as NAME @user@host
func (c *cli) follow(ctx context.Context, args []string) int {
	return c.followOrUnfollow(ctx, jobs.KindFollow, args)
}

// unfollow undoes a Follow: herald unfollow --as NAME @user@host
func (c *cli) unfollow(ctx context.Context, args []string) int {
	return c.followOrUnfollow(ctx, jobs.KindUnfollow, args)
}

func (c *cli) followOrUnfollow(ctx context.Context, kind string, args []string) int {
	fs := flag.NewFlagSet(kind, flag.ContinueOnError)
	as := fs.String("as", "", "the local actor")
	usage := fmt.Sprintf("usage: herald %s --as NAME @user@host|ACTOR_URL", kind)
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if err := checkTarget("target", pos[0]); err != nil {
			return err
		}
		actor, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, kind, actor, jobs.Args{Target: pos[0]}, func(res sent) {
			c.printSent(res)
			if kind == jobs.KindFollow {
				fmt.Fprintf(c.stdout, "pending until %s accepts (see herald following --as %s)\n", res.Object, actor.Name)
			}
		})
	})
}
