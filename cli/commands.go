package cli

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

//go:generate go test -run ^TestPackageDoc$ . -args -update-doc

// command is one row of the command table: the words that name it, what
// follows them, one line of help and the function that runs it.
type command struct {
	name   string // the words that select it: "actor add"
	args   string // what follows them in its usage line: "NAME [--name TEXT]"
	help   string // what it does, in one line
	run    func(c *cli, ctx context.Context, args []string) int
	hidden bool // started by another command (the bench's children), not listed
}

// commands is the command table: Run dispatches on it, the usage text, each
// command's -h and the package documentation (doc.go, generated from it)
// list it, in this order. A command is added to its subject's rows (command_table.go) and in a file of its
// own named after it. It is filled in init because its functions read it
// (a command's -h prints its row).
var commands []command

func init() {
	commands = slices.Concat(setupCommands(), actorCommands(), relayCommands(), moderationCommands(),
		followRequestCommands(), contentCommands(), deliveryCommands(), webhookCommands(), operatorCommands())
	commands = append(commands,
		command{name: "bench fanout", args: "[--scenario a|b|c|d|e|f|all|none] [--hosts N[,N...]] [--engines sqlite,postgres,postgres2 --postgres URL] [--rounds N] [--queued ROWS] [--markdown] [flags]",
			help: "benchmark deliveries and the inbox against a loopback inbox farm (a build with -tags bench)", run: (*cli).benchFanout},
		command{name: "bench wake", args: "[--posts N] [--gap D] [--idle D] [--postgres URL]",
			help: "time a command's commit to the first POST, and an idle server's CPU (a build with -tags bench)", run: (*cli).benchWake},
	)
	commands = append(commands, benchChildren...) // none without the bench tag
	commands = append(commands,
		command{name: "version", help: "print the version, commit, build date and Go version", run: (*cli).version},
		command{name: "help", args: "[COMMAND]", help: "print this list, or a command's flags", run: (*cli).help},
	)
}

// printHelp is a command's -h: its usage line and help from the table, then
// its flags.
func (c *cli) printHelp(fs *flag.FlagSet) {
	if cmd := commandNamed(fs.Name()); cmd != nil {
		fmt.Fprintf(c.stdout, "%s\n\n%s.\n", cmd.usageLine(), cmd.help)
	}
	fmt.Fprintln(c.stdout, "\nflags:")
	fs.SetOutput(c.stdout)
	fs.PrintDefaults()
}

// usageLine is the command's usage line, as its -h and its usage errors
// print it.
func (cmd *command) usageLine() string {
	return strings.TrimSpace("usage: herald " + cmd.name + " " + cmd.args)
}

// optional matches an innermost [bracketed] part of a usage line, and
// the "..." of one that repeats.
var optional = regexp.MustCompile(`\s*\[[^\[\]]*\](\.\.\.)?`)

// short is the command as the list shows it: its name and what it
// requires.
func (cmd *command) short() string {
	s := cmd.name + " " + cmd.args
	for optional.MatchString(s) {
		s = optional.ReplaceAllString(s, "")
	}
	return strings.Join(strings.Fields(s), " ")
}

// listing is the table as `herald help` prints it, one command a line
// (two where the command is long), rows starting with prefix.
func listing(prefix string) string {
	var b strings.Builder
	for _, cmd := range commands {
		if cmd.hidden || !strings.HasPrefix(cmd.name+" ", prefix) {
			continue
		}
		if s := cmd.short(); len(s) <= 20 {
			fmt.Fprintf(&b, "  %-20s  %s\n", s, cmd.help)
		} else {
			fmt.Fprintf(&b, "  %s\n  %-20s  %s\n", s, "", cmd.help)
		}
	}
	return b.String()
}

// usageText is what `herald` alone and `herald help` print.
func usageText() string {
	return "usage: herald <command> [flags]\n\ncommands:\n" + listing("") +
		"\nRun \"herald <command> -h\" for a command's flags.\n"
}

// groupUsage is what `herald actor help` prints: the group's commands.
func groupUsage(group string) string {
	return "usage: herald " + group + " <subcommand> [flags]\n\nsubcommands:\n" + listing(group+" ")
}

// help is `herald help`, and `herald help actor add` that command's -h.
func (c *cli) help(ctx context.Context, args []string) int {
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		fmt.Fprint(c.stdout, commandNamed("help").usageLine()+"\n\n")
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(c.stdout, usageText())
		return exitOK
	}
	cmd, rest, code := c.lookup(append(args, "-h"))
	if cmd == nil {
		return code
	}
	return cmd.run(c, ctx, rest)
}

// packageDoc is the package documentation (doc.go) the table gives.
func packageDoc() string {
	var b strings.Builder
	b.WriteString("// Code generated from the command table in commands.go by `go generate ./cli`; DO NOT EDIT.\n\n")
	b.WriteString("// Package cli is herald's command line: one command per file, named after\n")
	b.WriteString("// it, and one table (commands.go) that dispatches, prints the usage and\n")
	b.WriteString("// writes this list.\n//\n// Usage:\n//\n")
	for _, cmd := range commands {
		if !cmd.hidden {
			b.WriteString("//\t" + strings.TrimPrefix(cmd.usageLine(), "usage: ") + "\n")
		}
	}
	b.WriteString(`//
// The instance (the scheme and domain of every id) lives in the database:
// herald init or the first herald serve records it, and every other command
// reads it from there. Commands that need the network (post, follow, ...)
// leave a job for the running server, which does the work.
//
// Every flag can also be set with an environment variable: --listen is
// HERALD_LISTEN, --allow-private-network is HERALD_ALLOW_PRIVATE_NETWORK.
// Flags win over variables. See docs/configuration.md.
package cli
`)
	return b.String()
}
