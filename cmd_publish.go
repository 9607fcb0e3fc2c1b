package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"herald/federation"
	"herald/server"
	"herald/store"
	"herald/webfinger"
)

// publishFlags are the flags of the commands that publish as an actor: they
// need the instance (for ids), the database, and outbound access (to
// resolve recipients).
type publishFlags struct {
	instanceFlags
	db           *string
	allowPrivate *bool
}

func (f *publishFlags) register(fs *flag.FlagSet) {
	f.instanceFlags.register(fs)
	f.db = dbFlag(fs)
	f.allowPrivate = fs.Bool("allow-private-network", false, "let outbound requests reach loopback and private addresses (tests and local interop only)")
}

// publishing opens what publishing needs: the database and a server
// assembled around it (never listening), whose publisher queues deliveries
// for the running `herald serve` to send. close releases them.
func (c *cli) publishing(ctx context.Context, f *publishFlags) (srv *server.Server, db *store.DB, close func(), err error) {
	in, err := f.instance()
	if err != nil {
		return nil, nil, nil, err
	}
	db, err = openDB(ctx, *f.db)
	if err != nil {
		return nil, nil, nil, err
	}
	srv, err = server.New(ctx, server.Config{
		Instance:            in,
		Version:             versionString(),
		Logger:              slog.New(slog.NewTextHandler(io.Discard, nil)),
		AllowPrivateNetwork: *f.allowPrivate,
	}, db)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return srv, db, func() { db.Close() }, nil
}

// asActor loads the --as actor.
func asActor(ctx context.Context, db *store.DB, name string) (*store.Actor, error) {
	if name == "" {
		return nil, usageError{"--as NAME is required: the local actor to act as"}
	}
	a, err := db.ActorByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no actor named %q", name)
	}
	return a, err
}

// resolveActor turns @user@host (via WebFinger) or an actor URL into an
// actor id.
func resolveActor(ctx context.Context, srv *server.Server, target string) (string, error) {
	if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://") {
		return target, nil
	}
	return webfinger.Lookup(ctx, srv.Client(), target, srv.Instance().Scheme)
}

// withPublisher is withDB for the commands that publish: it parses args
// with fs (which gets the instance, --db and --allow-private-network
// flags), checks the number of positional arguments, assembles the
// publisher and calls fn. Errors are reported as withDB reports them.
func (c *cli) withPublisher(ctx context.Context, fs *flag.FlagSet, args []string, want int, usage string, fn func(srv *server.Server, db *store.DB, pos []string) error) int {
	var f publishFlags
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) != want {
		err = usageError{usage}
	}
	if err != nil {
		return c.fail(err)
	}
	srv, db, closeAll, err := c.publishing(ctx, &f)
	if err != nil {
		return c.fail(err)
	}
	defer closeAll()
	if err := fn(srv, db, pos); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// publish runs one publication as actor and prints what happened. A
// refused publication (an *outbox.InputError) is the command's failure.
func (c *cli) publish(ctx context.Context, srv *server.Server, actor *store.Actor, doc map[string]any) error {
	res, err := srv.Publisher().Publish(ctx, actor, doc, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s %s\n", res.Activity.Type, res.Activity.IRI)
	if obj := res.Activity.ObjectIRI; obj != "" {
		fmt.Fprintf(c.stdout, "object: %s\n", obj)
	}
	q := res.Queued
	fmt.Fprintf(c.stdout, "queued for %d inboxes", q.Queued)
	if q.SkippedBlocked+q.SkippedUnavailable > 0 {
		fmt.Fprintf(c.stdout, " (skipped: %d blocked, %d unavailable)", q.SkippedBlocked, q.SkippedUnavailable)
	}
	fmt.Fprintln(c.stdout, "; a running `herald serve` sends them within seconds")
	for iri, why := range res.Unresolved {
		fmt.Fprintf(c.stderr, "could not reach %s: %s\n", iri, why)
	}
	return nil
}

// post publishes a Note: herald post --as NAME [--to public|followers|@user@host] TEXT
func (c *cli) post(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("post", flag.ContinueOnError)
	as := fs.String("as", "", "the local actor that posts")
	to := fs.String("to", "public", "audience: public, followers, or @user@host (a direct message)")
	usage := `usage: herald post --as NAME [--to public|followers|@user@host] "TEXT"`
	return c.withPublisher(ctx, fs, args, 1, usage, func(srv *server.Server, db *store.DB, pos []string) error {
		actor, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		inst := srv.Instance()
		note := map[string]any{"type": "Note", "content": federation.SummaryHTML(pos[0])}
		switch *to {
		case "public":
			note["to"] = []string{federation.Public}
			note["cc"] = []string{inst.FollowersURL(actor.Name)}
		case "followers":
			note["to"] = []string{inst.FollowersURL(actor.Name)}
		default:
			id, err := resolveActor(ctx, srv, *to)
			if err != nil {
				return usageError{fmt.Sprintf("invalid --to %q: %v", *to, err)}
			}
			note["to"] = []string{id}
		}
		return c.publish(ctx, srv, actor, note)
	})
}

// deleteObject deletes a published object: herald delete URL
func (c *cli) deleteObject(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	return c.withPublisher(ctx, fs, args, 1, "usage: herald delete OBJECT_URL", func(srv *server.Server, db *store.DB, pos []string) error {
		o, err := db.ObjectByIRI(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no object %s on this server", pos[0])
		}
		if err != nil {
			return err
		}
		actor, err := db.ActorByID(ctx, o.ActorID)
		if err != nil {
			return err
		}
		return c.publish(ctx, srv, actor, map[string]any{"type": "Delete", "object": o.IRI})
	})
}

// follow sends a Follow: herald follow --as NAME @user@host
func (c *cli) follow(ctx context.Context, args []string) int {
	return c.followOrUnfollow(ctx, "follow", args)
}

// unfollow undoes a Follow: herald unfollow --as NAME @user@host
func (c *cli) unfollow(ctx context.Context, args []string) int {
	return c.followOrUnfollow(ctx, "unfollow", args)
}

func (c *cli) followOrUnfollow(ctx context.Context, verb string, args []string) int {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	as := fs.String("as", "", "the local actor")
	usage := fmt.Sprintf("usage: herald %s --as NAME @user@host|ACTOR_URL", verb)
	return c.withPublisher(ctx, fs, args, 1, usage, func(srv *server.Server, db *store.DB, pos []string) error {
		actor, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		target, err := resolveActor(ctx, srv, pos[0])
		if err != nil {
			return err
		}
		if verb == "follow" {
			return c.publish(ctx, srv, actor, map[string]any{"type": "Follow", "object": target})
		}
		list, err := db.FollowingOf(ctx, actor.ID)
		if err != nil {
			return err
		}
		for _, g := range list {
			if g.Target == target {
				return c.publish(ctx, srv, actor, map[string]any{"type": "Undo", "object": g.FollowID})
			}
		}
		return fmt.Errorf("%s does not follow %s", actor.Name, target)
	})
}

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
