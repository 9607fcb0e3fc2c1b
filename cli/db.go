package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/store"
)

// dbCopy is `herald db copy --from FILE --to postgres://...`: the move of an
// instance from its SQLite file to PostgreSQL, with every server stopped.
func (c *cli) dbCopy(ctx context.Context, args []string) int {
	const usage = "usage: herald db copy --from herald.db --to postgres://USER@HOST/DB"
	fs := flag.NewFlagSet("db copy", flag.ContinueOnError)
	from := fs.String("from", "herald.db", "the SQLite database file to copy")
	to := fs.String("to", "", "the PostgreSQL database to copy into (postgres://...): new and empty")
	pos, err := c.parse(fs, args)
	switch {
	case err != nil:
	case len(pos) > 0:
		err = usageError{fmt.Sprintf("db copy takes no arguments, got %q", pos[0])}
	case *to == "":
		err = usageError{usage}
	case store.IsPostgresURL(*from):
		err = usageError{"--from is the SQLite file; copying out of PostgreSQL is pg_dump's job"}
	case !store.IsPostgresURL(*to):
		err = usageError{fmt.Sprintf("invalid --to %q: want a postgres:// URL", *to)}
	}
	if err != nil {
		return c.fail(err)
	}
	src, err := store.OpenExisting(ctx, *from)
	if errors.Is(err, store.ErrNoDatabase) {
		return c.fail(fmt.Errorf("no database at %s: give --from the file `herald serve` uses", *from))
	}
	if err != nil {
		return c.fail(fmt.Errorf("database: %w", err))
	}
	defer src.Close()
	// Holding the source's serve lock keeps a server off it while it is
	// copied; one that runs now must be stopped first.
	lock, err := src.LockServe()
	if errors.Is(err, store.ErrServing) {
		return c.fail(fmt.Errorf("a herald serve is running on %s: stop it (and every server of the instance) before the copy", src.Path()))
	}
	if err != nil {
		return c.fail(err)
	}
	defer lock.Close()
	dst, err := store.Open(ctx, *to)
	if err != nil {
		return c.fail(fmt.Errorf("database: %w", err))
	}
	defer dst.Close()
	counts, err := src.CopyTo(ctx, dst)
	if err != nil {
		return c.fail(err)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS\tCOPIED")
	var total int64
	for _, n := range counts {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", n.Table, n.From, n.To)
		total += n.To
	}
	tw.Flush()
	fmt.Fprintf(c.stdout, "copied %s in %s from %s to %s; every count matches. Start the servers with --db on the new database (and --media-dir on a folder they share: copy %s there).\n",
		plural(total, "row"), plural(len(counts), "table"), src.Path(), dst.Path(), src.MediaDir())
	return exitOK
}
