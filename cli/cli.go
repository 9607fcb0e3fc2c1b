package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"herald/store"
)

// cli carries what every command needs: the environment and the streams.
type cli struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// usageError is a command-line mistake: exit code 2, one line on stderr.
type usageError struct{ msg string }

// Error is the one-line message.
func (e usageError) Error() string { return e.msg }

// parse parses args with fs, allowing flags and positional arguments in any
// order (`actor add alice --name Alice`), then fills every flag that was not
// given on the command line from its HERALD_* environment variable. It
// returns the positional arguments.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printHelp(fs)
				return nil, err
			}
			return nil, usageError{explainFlagError(fs, err)}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		name := envName(f.Name)
		if v := c.getenv(name); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError{fmt.Sprintf("invalid value %q for %s: %s", v, name, accepts(f, e))}
			}
		}
	})
	return positional, err
}

var (
	badValue  = regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): (.*)$`)
	undefined = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
)

// instanceOnlyFlags belong to `herald init` and `herald serve`: every other
// command reads the instance from the database.
var instanceOnlyFlags = map[string]bool{"domain": true, "scheme": true, "listen": true, "allow-private-network": true, "insecure-http": true}

// explainFlagError rewrites the flag package's messages into one line that
// names the flag the way it is written (--name) and says what it accepts.
func explainFlagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := badValue.FindStringSubmatch(msg); m != nil {
		if f := fs.Lookup(m[2]); f != nil {
			return fmt.Sprintf("invalid value %q for --%s: %s", m[1], m[2], accepts(f, errors.New(m[3])))
		}
	}
	if m := undefined.FindStringSubmatch(msg); m != nil {
		if name := strings.SplitN(m[1], "=", 2)[0]; instanceOnlyFlags[name] && fs.Name() != "serve" && fs.Name() != "init" {
			return fmt.Sprintf("%s takes no --%s: commands read the instance from the database and leave the network to the server (herald init and herald serve set it)", fs.Name(), name)
		}
		return "unknown flag --" + m[1] + " (run \"herald " + fs.Name() + " -h\")"
	}
	return msg
}

// accepts says what a flag takes, from its type; err is the parse error,
// used when the type says nothing better.
func accepts(f *flag.Flag, err error) string {
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.durationValue":
		return "want a duration like 5m"
	case "*flag.boolValue":
		return "want true or false"
	case "*flag.float64Value":
		return "want a number"
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		return "want a whole number"
	}
	return err.Error()
}

// envName maps a flag name to its environment variable: --allow-private-network
// is HERALD_ALLOW_PRIVATE_NETWORK.
func envName(flagName string) string {
	return "HERALD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fail reports err and returns the exit code that fits it.
func (c *cli) fail(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(c.stderr, "herald:", ue.msg)
		return exitUsage
	}
	fmt.Fprintln(c.stderr, "herald:", err)
	return exitFail
}

// dbFlag registers --db on fs.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "herald.db", "the SQLite database file, or a postgres:// URL for a PostgreSQL database")
}

// mediaDirFlag registers --media-dir on fs, for the commands that keep or
// serve uploaded files; useMediaDir applies it.
func mediaDirFlag(fs *flag.FlagSet) *string {
	return fs.String("media-dir", "", "the folder of uploaded files (default: beside an SQLite file, herald.db-media); with PostgreSQL, one folder every Herald process shares")
}

// useMediaDir makes db keep its media files in dir, if one was given.
func useMediaDir(db *store.DB, dir string) {
	if dir != "" {
		db.SetMediaDir(dir)
	}
}

// writableDir checks that the server can keep files in dir (made if
// missing, owner only, and an older Herald's readable files made owner
// only), by writing one and removing it; "" (no folder given) passes.
func writableDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := store.SecureMediaDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".herald-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// openDB opens the database a command works on. It never creates one: a
// command run in the wrong folder says so. What the command commits wakes
// the running server, which sends what was queued at once.
func openDB(ctx context.Context, path string) (*store.DB, error) {
	db, err := store.OpenExisting(ctx, path)
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, fmt.Errorf("no database at %s: give --db (or HERALD_DB) the file `herald serve` uses, or create one with `herald init --domain HOST`", path)
	}
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	db.NotifyOnCommit()
	return db, nil
}

// withDB is the shape most commands share: parse args with fs (which gets
// --db), check the number of positional arguments (want; -1 for any), open
// the database and call fn. An error from fn is reported with the exit code
// that fits it: 2 for a usageError, 1 for anything else.
func (c *cli) withDB(ctx context.Context, fs *flag.FlagSet, args []string, want int, usage string, fn func(db *store.DB, pos []string) error) int {
	path := dbFlag(fs)
	pos, err := c.parse(fs, args)
	if err == nil && want >= 0 && len(pos) != want {
		err = usageError{usage}
	}
	if err != nil {
		return c.fail(err)
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	if err := fn(db, pos); err != nil {
		return c.fail(err)
	}
	return exitOK
}
