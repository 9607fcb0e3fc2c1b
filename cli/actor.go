package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/federation"
	"herald/jobs"
	"herald/store"
)

var actorTypes = map[string]bool{"Person": true, "Service": true, "Application": true, "Group": true}

func (c *cli) actorAdd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor add", flag.ContinueOnError)
	path := dbFlag(fs)
	display := fs.String("name", "", "display name")
	summary := fs.String("summary", "", "profile text (plain text)")
	manual := fs.Bool("manual-approval", false, "approve followers by hand")
	typ := fs.String("type", "Person", "actor type: Person, Service, Application or Group")
	pos, err := c.parse(fs, args)
	if err != nil {
		return c.fail(err)
	}
	if !actorTypes[*typ] {
		return c.fail(usageError{fmt.Sprintf("invalid --type %q: want Person, Service, Application or Group", *typ)})
	}
	if len(pos) != 1 {
		return c.fail(usageError{"usage: herald actor add NAME [--name TEXT] [--summary TEXT] [--manual-approval] [--type TYPE]"})
	}
	name := pos[0]
	if !store.ValidActorName(name) {
		return c.fail(usageError{fmt.Sprintf("invalid actor name %q: use 1 to 30 of a-z, 0-9 and _", name)})
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	in, err := c.loadInstance(ctx, db)
	if err != nil {
		return c.fail(err)
	}
	// Check first so a duplicate fails fast, before generating a key.
	if _, err := db.ActorByName(ctx, name); err == nil {
		fmt.Fprintf(c.stderr, "herald: actor %q already exists\n", name)
		return exitFail
	}
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		return c.fail(err)
	}
	token := store.NewToken()
	a := &store.Actor{Name: name, Type: *typ, DisplayName: *display, Summary: *summary, ManualApproval: *manual, PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, a, token); err != nil {
		if errors.Is(err, store.ErrExists) {
			fmt.Fprintf(c.stderr, "herald: actor %q already exists\n", name)
			return exitFail
		}
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "actor: %s\nhandle: @%s@%s\ntoken: %s\n", in.ActorID(name), name, in.Domain, token)
	fmt.Fprintln(c.stderr, "Keep the token: it is shown only once. `herald actor token NAME` issues a new one.")
	return exitOK
}

func (c *cli) actorList(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor list", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "actor list takes no arguments", func(db *store.DB, _ []string) error {
		in, err := c.loadInstance(ctx, db)
		if err != nil {
			return err
		}
		actors, err := db.ListActors(ctx)
		if err != nil {
			return err
		}
		suspensions, err := db.ActorSuspensions(ctx)
		if err != nil {
			return err
		}
		state := map[int64]string{}
		for _, s := range suspensions {
			if s.DeletedAt.IsZero() {
				state[s.ActorID] = "suspended, deleted on " + stamp(s.DeletionDue())
			}
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTYPE\tFOLLOWERS\tFOLLOWING\tID\tSTATE")
		for _, a := range actors {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", a.Name, a.Type, a.Followers, a.Following, in.ActorID(a.Name), state[a.ID])
		}
		return tw.Flush()
	})
}

func (c *cli) actorToken(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor token", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald actor token NAME", func(db *store.DB, pos []string) error {
		token := store.NewToken()
		if err := db.SetActorToken(ctx, pos[0], token); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no actor named %q", pos[0])
		} else if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "token: %s\n", token)
		return nil
	})
}

// actorDelete deletes an actor for good and tells every server that knows
// it: herald actor delete NAME --yes
func (c *cli) actorDelete(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor delete", flag.ContinueOnError)
	yes := fs.Bool("yes", false, "confirm: the actor cannot be restored and its name cannot be reused")
	return c.withDB(ctx, fs, args, 1, "usage: herald actor delete NAME --yes", func(db *store.DB, pos []string) error {
		if !*yes {
			return usageError{"this deletes " + pos[0] + " for good (its name cannot be reused): add --yes"}
		}
		actor, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindDeleteActor, actor, jobs.Args{}, func(res sent) {
			fmt.Fprintf(c.stdout, "deleted %s; its Delete is queued for %s (low priority): %s\n", actor.Name, plural(res.Queued, "inbox"), res.Activity)
		})
	})
}

// actorRotateKey gives an actor a new key pair and tells every server that
// knows it (a job): herald actor rotate-key NAME
func (c *cli) actorRotateKey(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor rotate-key", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald actor rotate-key NAME", func(db *store.DB, pos []string) error {
		actor, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindRotateKey, actor, jobs.Args{}, func(res sent) {
			fmt.Fprintf(c.stdout, "new key for %s; the old one signs nothing more. %s %s\n", actor.Name, res.Type, res.Activity)
			c.printQueued(res)
		})
	})
}
