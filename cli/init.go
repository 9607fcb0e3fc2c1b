package cli

import (
	"context"
	"flag"
	"fmt"

	"herald/store"
)

// initInstance is `herald init --domain HOST [--scheme https|http]`: it
// creates the database (mode 0600) and records the instance, so that
// commands can run before the first `herald serve`.
func (c *cli) initInstance(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	var inst instanceFlags
	inst.register(fs, "the public host[:port] that goes into every id (required)")
	path := dbFlag(fs)
	pos, err := c.parse(fs, args)
	switch {
	case err != nil:
	case len(pos) > 0:
		err = usageError{fmt.Sprintf("init takes no arguments, got %q", pos[0])}
	case inst.domain == "":
		err = usageError{"usage: herald init --domain HOST [--scheme https|http] [--db FILE]"}
	}
	if err != nil {
		return c.fail(err)
	}
	want, err := inst.want("", false)
	if err != nil {
		return c.fail(err)
	}
	db, err := store.Open(ctx, *path)
	if err != nil {
		return c.fail(fmt.Errorf("database: %w", err))
	}
	defer db.Close()
	in, err := c.settle(ctx, db, &inst, want, false)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "%s is the instance %s\n", db.Path(), in.Base())
	return exitOK
}
