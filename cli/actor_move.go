package cli

import (
	"context"
	"flag"
	"fmt"

	"herald/jobs"
	"herald/store"
)

// actorMove moves an actor to an account elsewhere: herald actor move NAME
// --to @new@other.example. The server checks that the new account lists
// this one in alsoKnownAs, records movedTo and sends the Move (a job).
func (c *cli) actorMove(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor move", flag.ContinueOnError)
	to := fs.String("to", "", "the account it moves to: @user@host or an actor URL")
	usage := "usage: herald actor move NAME --to @user@host|ACTOR_URL"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if *to == "" {
			return usageError{usage}
		}
		if err := checkTarget("--to", *to); err != nil {
			return err
		}
		actor, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindMove, actor, jobs.Args{Target: *to}, func(res sent) {
			fmt.Fprintf(c.stdout, "%s moved to %s; it takes no new followers\n", actor.Name, *to)
			c.printSent(res)
		})
	})
}

// actorAlias lists, adds or removes the accounts elsewhere that may move to
// an actor (its alsoKnownAs): herald actor alias NAME [--add|--remove
// @old@other.example]. A change is a job: the server checks an added
// account exists and sends the Update of the actor.
func (c *cli) actorAlias(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor alias", flag.ContinueOnError)
	add := fs.String("add", "", "an account that may move here: @user@host or an actor URL")
	remove := fs.String("remove", "", "an alias to take away: @user@host or an actor URL")
	usage := "usage: herald actor alias NAME [--add|--remove @user@host|ACTOR_URL]"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if *add != "" && *remove != "" {
			return usageError{"give --add or --remove, not both"}
		}
		actor, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		if *add == "" && *remove == "" {
			for _, a := range actor.AlsoKnownAs {
				fmt.Fprintln(c.stdout, a)
			}
			if actor.MovedTo != "" {
				fmt.Fprintf(c.stdout, "(moved to %s)\n", actor.MovedTo)
			}
			return nil
		}
		target, flagName := *add, "--add"
		if *remove != "" {
			target, flagName = *remove, "--remove"
		}
		if err := checkTarget(flagName, target); err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindAlias, actor, jobs.Args{Target: target, Remove: *remove != ""}, func(res sent) {
			verb := "may now move to"
			if *remove != "" {
				verb = "may no longer move to"
			}
			fmt.Fprintf(c.stdout, "%s %s %s; %s %s\n", target, verb, actor.Name, res.Type, res.Activity)
			c.printQueued(res)
		})
	})
}
