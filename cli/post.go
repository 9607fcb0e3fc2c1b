package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"herald/jobs"
	"herald/outbox"
	"herald/outbox/media"
	"herald/store"
)

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
	quote := fs.String("quote", "", "the URL of a post to quote (its author is asked to approve)")
	mediaDir := mediaDirFlag(fs)
	usage := `usage: herald post --as NAME [--to public|followers|@user@host] [--cw TEXT] [--reply-to URL] [--lang xx] [--attach FILE [--alt TEXT]] [--quote URL] "TEXT"`
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
		if *quote != "" && !strings.HasPrefix(*quote, "https://") && !strings.HasPrefix(*quote, "http://") {
			return usageError{fmt.Sprintf("invalid --quote %q: want the URL of a post", *quote)}
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
		args := jobs.Args{Text: pos[0], To: *to, CW: *cw, ReplyTo: *replyTo, Lang: *lang, Quote: *quote}
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
