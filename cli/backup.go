package cli

import (
	"context"
	"flag"
	"fmt"
	"os"

	"herald/store"
)

// backup is `herald backup FILE`: a consistent copy of the database, made
// while the server runs, and of the media folder beside it (FILE-media/):
// the whole instance. docs/operating.md gives the restore steps.
func (c *cli) backup(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	mediaDir := mediaDirFlag(fs)
	return c.withDB(ctx, fs, args, 1, "usage: herald backup FILE", func(db *store.DB, pos []string) error {
		useMediaDir(db, *mediaDir)
		if err := db.Backup(ctx, pos[0]); err != nil {
			return err
		}
		st, err := os.Stat(pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "backed up %s to %s (%d bytes, mode %v); it holds the private keys: keep it as safe as the server\n",
			db.Path(), pos[0], st.Size(), st.Mode().Perm())
		if _, err := os.Stat(pos[0] + "-media"); err == nil {
			fmt.Fprintf(c.stdout, "media copied to %s-media\n", pos[0])
		}
		return nil
	})
}
