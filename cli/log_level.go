package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"herald/node"
	"herald/store"
)

// logLevel is `herald log-level LEVEL`: it records the server's log level
// in the database; the running server applies it at once.
func (c *cli) logLevel(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("log-level", flag.ContinueOnError)
	usage := "usage: herald log-level debug|info|warn|error"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if _, err := node.ParseLogLevel(pos[0]); err != nil {
			return usageError{fmt.Sprintf("invalid log level %q: %v", pos[0], err)}
		}
		if err := db.SetLogLevel(ctx, strings.ToLower(pos[0])); errors.Is(err, store.ErrNoInstance) {
			return fmt.Errorf("%s %w", db.Path(), errNoInstance)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "log level %s (a running server applies it now)\n", strings.ToLower(pos[0]))
		return nil
	})
}
