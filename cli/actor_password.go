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

	"golang.org/x/term"

	"herald/login"
	"herald/store"
)

// actorPassword is `herald actor password NAME [--stdin] [--remove]`: sets
// the password a person logs in to NAME with from a Mastodon app (the
// client API's authorize page), stored only as a bcrypt hash. On a
// terminal it asks twice without echo; with --stdin, or when standard
// input is not a terminal, it reads the first line. --remove takes the
// password away (apps' tokens keep working: `herald actor tokens`
// revokes them). No email is needed, and the password is never printed
// or logged.
func (c *cli) actorPassword(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor password", flag.ContinueOnError)
	fromStdin := fs.Bool("stdin", false, "read the password from the first line of standard input")
	remove := fs.Bool("remove", false, "remove the password: nobody can log in to the actor any more")
	const usage = "usage: herald actor password NAME [--stdin] [--remove]"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		a, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		if *remove {
			if err := db.RemoveActorPassword(ctx, a.ID); errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%s has no password", a.Name)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "password of %s removed\n", a.Name)
			return nil
		}
		password, err := c.readPassword(a.Name, *fromStdin)
		if err != nil {
			return err
		}
		hash, err := login.HashPassword(password)
		if err != nil {
			return err
		}
		if err := db.SetActorPassword(ctx, a.ID, hash); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "password of %s set (stored as a bcrypt hash); log in from a Mastodon app with the account name %s\n", a.Name, a.Name)
		return nil
	})
}

// firstLine is the first line of r, without its line end: a password
// given on standard input.
func firstLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// readPassword asks for a password twice on a terminal, without echo, or
// reads the first line of standard input.
func (c *cli) readPassword(name string, fromStdin bool) (string, error) {
	f, isFile := stdin.(*os.File)
	if fromStdin || !isFile || !term.IsTerminal(int(f.Fd())) {
		return firstLine(stdin)
	}
	ask := func(prompt string) (string, error) {
		fmt.Fprint(c.stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(c.stderr)
		return string(b), err
	}
	first, err := ask("New password for " + name + ": ")
	if err != nil {
		return "", err
	}
	again, err := ask("The same again: ")
	if err != nil {
		return "", err
	}
	if first != again {
		return "", errors.New("the two passwords differ: nothing changed")
	}
	return first, nil
}
