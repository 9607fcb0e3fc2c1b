package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"

	"herald/jobs"
	"herald/outbox"
	"herald/outbox/media"
	"herald/store"
	"herald/webfinger"
)

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

// checkTarget accepts what the server can resolve: @user@host, user@host
// or an http(s) actor URL. Only the form is checked here; the server does
// the lookup.
func checkTarget(flagName, target string) error {
	if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://") {
		return nil
	}
	if _, _, err := webfinger.ParseHandle(target); err != nil {
		return usageError{fmt.Sprintf("invalid %s %q: want @user@host or an actor URL", flagName, target)}
	}
	return nil
}

// post publishes a Note: herald post --as NAME [--to public|followers|@user@host] TEXT
func (c *cli) post(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("post", flag.ContinueOnError)
	as := fs.String("as", "", "the local actor that posts")
	to := fs.String("to", "public", "audience: public, followers, or @user@host (a direct message)")
	cw := fs.String("cw", "", "a content warning: shown instead of the text until opened")
	replyTo := fs.String("reply-to", "", "the URL of the post this answers; its author is addressed")
	lang := fs.String("lang", "", "the language of the text, e.g. en or pt-BR")
	attach := fs.String("attach", "", "an image (PNG, JPEG, GIF, WebP), short video or audio file to attach")
	alt := fs.String("alt", "", "with --attach: the alt text that describes it")
	mediaDir := mediaDirFlag(fs)
	usage := `usage: herald post --as NAME [--to public|followers|@user@host] [--cw TEXT] [--reply-to URL] [--lang xx] [--attach FILE [--alt TEXT]] "TEXT"`
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		useMediaDir(db, *mediaDir)
		if *to != "public" && *to != "followers" {
			if err := checkTarget("--to", *to); err != nil {
				return err
			}
		}
		if *replyTo != "" && !strings.HasPrefix(*replyTo, "https://") && !strings.HasPrefix(*replyTo, "http://") {
			return usageError{fmt.Sprintf("invalid --reply-to %q: want the URL of a post", *replyTo)}
		}
		if *lang != "" && !langTag.MatchString(*lang) {
			return usageError{fmt.Sprintf("invalid --lang %q: want a language tag such as en or pt-BR", *lang)}
		}
		if *alt != "" && *attach == "" {
			return usageError{"--alt describes an --attach file"}
		}
		actor, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		args := jobs.Args{Text: pos[0], To: *to, CW: *cw, ReplyTo: *replyTo, Lang: *lang}
		if *attach != "" {
			m, err := c.upload(ctx, db, actor, *attach, *alt)
			if err != nil {
				return err
			}
			args.Media = []int64{m.ID}
		}
		return c.runJob(ctx, db, jobs.KindPost, actor, args, c.printSent)
	})
}

// upload stores a file for a post (outbox.StoreMedia), saying why one is
// refused.
func (c *cli) upload(ctx context.Context, db *store.DB, actor *store.Actor, path, alt string) (*store.Media, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--attach: %w", err)
	}
	defer f.Close()
	m, err := outbox.StoreMedia(ctx, db, actor, f, alt)
	switch {
	case errors.Is(err, media.ErrTooLarge):
		return nil, fmt.Errorf("--attach %s: too large (images up to %d MiB and %d megapixels, video and audio up to %d MiB)",
			path, media.DefaultLimits.Image>>20, media.DefaultLimits.Pixels/1_000_000, media.DefaultLimits.Video>>20)
	case errors.Is(err, media.ErrUnsupported):
		return nil, fmt.Errorf("--attach %s: not a PNG, JPEG, GIF, WebP, MP4, WebM, Ogg, MP3 or M4A file", path)
	case errors.Is(err, media.ErrInvalid):
		return nil, fmt.Errorf("--attach %s: the file is damaged", path)
	case err != nil:
		return nil, fmt.Errorf("--attach %s: %w", path, err)
	}
	return m, nil
}

// langTag is a BCP 47 language tag, loosely: a language and subtags.
var langTag = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$`)

// pin puts a post in its actor's featured collection: herald pin URL
func (c *cli) pin(ctx context.Context, args []string) int {
	return c.objectJob(ctx, jobs.KindPin, args)
}

// unpin takes a post out of the featured collection: herald unpin URL
func (c *cli) unpin(ctx context.Context, args []string) int {
	return c.objectJob(ctx, jobs.KindUnpin, args)
}

// deleteObject deletes a published object: herald delete URL
func (c *cli) deleteObject(ctx context.Context, args []string) int {
	return c.objectJob(ctx, jobs.KindDelete, args)
}

// objectJob is a job about one published object (delete, pin, unpin),
// done as the object's author: herald KIND OBJECT_URL.
func (c *cli) objectJob(ctx context.Context, kind string, args []string) int {
	fs := flag.NewFlagSet(kind, flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald "+kind+" OBJECT_URL", func(db *store.DB, pos []string) error {
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
		return c.runJob(ctx, db, kind, actor, jobs.Args{Object: o.IRI}, c.printSent)
	})
}

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
		return c.runJob(ctx, db, kind, actor, jobs.Args{Target: pos[0]}, func(res jobs.Result) {
			c.printSent(res)
			if kind == jobs.KindFollow {
				fmt.Fprintf(c.stdout, "pending until %s accepts (see herald following --as %s)\n", res.Object, actor.Name)
			}
		})
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
