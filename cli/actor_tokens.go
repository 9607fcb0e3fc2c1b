package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"herald/store"
)

// actorTokens is `herald actor tokens NAME [--revoke ID] [--revoke-all]`:
// lists the tokens the actor gave Mastodon apps (which app, what scopes,
// when made and last used), or revokes one or all of them; a revoked
// token stops working at once. The tokens themselves are never shown:
// only their hashes are kept.
func (c *cli) actorTokens(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor tokens", flag.ContinueOnError)
	revoke := fs.Int64("revoke", 0, "revoke the token with this ID (from the list)")
	all := fs.Bool("revoke-all", false, "revoke every token of the actor")
	const usage = "usage: herald actor tokens NAME [--revoke ID] [--revoke-all]"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if *revoke != 0 && *all {
			return usageError{"--revoke and --revoke-all disagree"}
		}
		a, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		switch {
		case *all:
			n, err := db.RevokeActorOAuthTokens(ctx, a.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "revoked %s of %s\n", plural(n, "token"), a.Name)
			return nil
		case *revoke != 0:
			if err := db.RevokeOAuthToken(ctx, a.ID, *revoke); errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%s has no token %d (see herald actor tokens %s)", a.Name, *revoke, a.Name)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "revoked token %d of %s\n", *revoke, a.Name)
			return nil
		}
		list, err := db.ActorOAuthTokens(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			fmt.Fprintf(c.stdout, "%s has given no app a token\n", a.Name)
			return nil
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAPP\tSCOPES\tCREATED\tLAST USED")
		for _, t := range list {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", t.ID, t.AppName, strings.Join(t.Scopes, " "), stamp(t.CreatedAt), stamp(t.LastUsedAt))
		}
		return tw.Flush()
	})
}
