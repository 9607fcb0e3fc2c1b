package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"herald/admin"
	"herald/store"
)

// stdin is what `herald admin password --stdin` reads; tests replace it.
var stdin io.Reader = os.Stdin

// adminPassword is `herald admin password [--stdin]`: sets the password of
// the console at /admin, stored only as a bcrypt hash. Without --stdin it
// makes up a strong one and prints it once. Setting it logs every console
// session out.
func (c *cli) adminPassword(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("admin password", flag.ContinueOnError)
	fromStdin := fs.Bool("stdin", false, "read the password from the first line of standard input instead of making one up")
	return c.withDB(ctx, fs, args, 0, "usage: herald admin password [--stdin]", func(db *store.DB, _ []string) error {
		password := admin.NewPassword()
		if *fromStdin {
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			password = strings.TrimRight(line, "\r\n")
		}
		hash, err := admin.HashPassword(password)
		if err != nil {
			return err
		}
		if err := db.SetAdminPassword(ctx, hash); err != nil {
			return err
		}
		if *fromStdin {
			fmt.Fprintln(c.stdout, "console password set; every console session was logged out")
			return nil
		}
		fmt.Fprintf(c.stdout, "console password: %s\n", password)
		fmt.Fprintln(c.stderr, "Keep it: it is shown only once (stored as a bcrypt hash). Log in at /admin.")
		return nil
	})
}
