package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"herald/jobs"
	"herald/store"
)

// quoteRevoke takes back the approval of a quote of a local post:
// herald quote revoke POST_URL QUOTING_POST_URL. The post's actor does
// it (outbox.Publisher.RevokeQuote, through a job): the stamp is served
// as gone and a Delete of it goes to the quoting post's author and to
// the servers that got the post.
func (c *cli) quoteRevoke(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("quote revoke", flag.ContinueOnError)
	usage := "usage: herald quote revoke POST_URL QUOTING_POST_URL"
	return c.withDB(ctx, fs, args, 2, usage, func(db *store.DB, pos []string) error {
		o, err := db.ObjectByIRI(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no post %s on this server", pos[0])
		}
		if err != nil {
			return err
		}
		if _, err := db.QuoteAuthorizationOf(ctx, o.ID, pos[1]); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%s has no approved quote by %s", pos[0], pos[1])
		} else if err != nil {
			return err
		}
		actor, err := db.ActorByID(ctx, o.ActorID)
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindQuoteRevoke, actor, jobs.Args{Object: o.IRI, Target: pos[1]}, func(res sent) {
			fmt.Fprintf(c.stdout, "revoked the quote of %s by %s\n", pos[0], pos[1])
			if res.Activity != "" {
				fmt.Fprintf(c.stdout, "sent Delete %s\n", res.Activity)
				c.printQueued(res)
			}
		})
	})
}
