package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
)

// Exit codes: 0 success, 1 the command failed (a duplicate name, a database
// error), 2 the command line was wrong (unknown flag, bad value).
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// defaultMemoryLimit is the soft memory limit Herald runs with unless
// GOMEMLIMIT says otherwise (and serve's --memory-limit, which wins over
// both: serve_runtime.go). Most of a busy fan-out's heap is garbage
// (request buffers, JSON); a limit makes the collector return it before
// the process grows, at no measured throughput cost (docs/PERFORMANCE.md:
// 163 MB peak without it, 125 MB with it, same deliveries/s). 120 MiB
// (issue 29): with 4,096 idle connections kept (federation's pool) a
// 100 MiB limit kept the collector running (22% of a 30,000-host
// fan-out's CPU); at 120 MiB it took 5% and the process peaked at 146 MB.
// A larger instance raises it with --memory-limit 1GiB or GOMEMLIMIT=1GiB.
const defaultMemoryLimit = 120 << 20

// Main runs herald as a process: the memory limit, SIGINT and SIGTERM as
// the end of the command, and Run on the process's arguments, environment
// and streams. It returns the exit code.
func Main() int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
}

// Run is herald without the process: it takes the arguments (without the
// program name), the environment and the output streams, finds the
// command in the table (commands.go) and returns its exit code, so tests
// drive it directly.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c := &cli{getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help":
		args = append([]string{"help"}, args[1:]...)
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, rest, code := c.lookup(args)
	if cmd == nil {
		return code
	}
	return cmd.run(c, ctx, rest)
}

// lookup finds the command args name: the longest row of the table whose
// words begin args. It returns the command and the arguments after its
// name; nil and an exit code when there is none (it has said why).
func (c *cli) lookup(args []string) (*command, []string, int) {
	if len(args) > 1 {
		if cmd := commandNamed(args[0] + " " + args[1]); cmd != nil {
			return cmd, args[2:], exitOK
		}
	}
	if cmd := commandNamed(args[0]); cmd != nil {
		return cmd, args[1:], exitOK
	}
	subs := subcommands(args[0])
	switch {
	case len(subs) == 0:
		fmt.Fprintf(c.stderr, "herald: unknown command %q (run \"herald help\")\n", args[0])
	case len(args) > 1 && (args[1] == "help" || args[1] == "-h" || args[1] == "--help"):
		fmt.Fprint(c.stdout, groupUsage(args[0]))
		return nil, nil, exitOK
	case len(subs) == 1:
		fmt.Fprintf(c.stderr, "herald: %s\n", subs[0].usageLine())
	case len(args) == 1:
		fmt.Fprintf(c.stderr, "herald: %s needs a subcommand: %s\n", args[0], orList(subNames(subs)))
	default:
		fmt.Fprintf(c.stderr, "herald: unknown %s subcommand %q (want %s)\n", args[0], args[1], orList(subNames(subs)))
	}
	return nil, nil, exitUsage
}

// commandNamed is the row of the table called name, or nil.
func commandNamed(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// subcommands are the listed rows under group (actor: actor add, actor
// list, ...).
func subcommands(group string) []*command {
	var subs []*command
	for i := range commands {
		if strings.HasPrefix(commands[i].name, group+" ") && !commands[i].hidden {
			subs = append(subs, &commands[i])
		}
	}
	return subs
}

// subNames are the last words of the names of subs.
func subNames(subs []*command) []string {
	var names []string
	for _, s := range subs {
		names = append(names, s.name[strings.LastIndex(s.name, " ")+1:])
	}
	return slices.Compact(names)
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
