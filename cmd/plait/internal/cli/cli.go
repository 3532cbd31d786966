// Package cli is the plait command as a function: [Main] parses the
// arguments, opens the store through the function it is given and runs one
// command, writing to the writers it is given. The binary in cmd/plait
// calls it with a Redis opener ([OpenRedis]); tests call it with a memory
// store, so every command runs in the test's process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/plaitdag/plait"
)

// Exit codes of [Main]; docs/cli.md lists them for scripts.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailure: the store failed, or an action failed on some item.
	ExitFailure = 1
	// ExitUsage: unknown command, bad flag or argument.
	ExitUsage = 2
	// ExitNotFound: the run, task, letter, node or schedule named does not
	// exist.
	ExitNotFound = 3
	// ExitRefused: nothing was done: an action printed its count and waits
	// for -yes, the target holds more than -max, or the store refused the
	// change in the state it found (a run still active, a task past the
	// state the action applies to).
	ExitRefused = 4
	// ExitUnsupported: the store lacks the capability the command needs.
	ExitUnsupported = 5
	// ExitDeparts: plait doctor found a setting or permission that departs
	// from docs/operations.md (a warning or an error; notes alone exit 0).
	ExitDeparts = 6
	// ExitInterrupted: the command was interrupted (SIGINT, SIGTERM: its
	// context ended) before it was done, as a shell reports 128+SIGINT.
	// serve, whose way to stop is an interrupt, exits 0 instead.
	ExitInterrupted = 130
)

// Conn is where the command's store is: the global flags.
type Conn struct {
	// Redis is the store's URL (see docs/cli.md for the forms).
	Redis string
	// Prefix is the key prefix the store was opened with.
	Prefix string
	// Cluster reads a plain redis:// URL as a cluster seed.
	Cluster bool
	// Shards is the store's shard count, 0 for the default.
	Shards int
}

// Opener opens the Scheduler a command reads and acts through. It is used
// as a client (no Run); what it opens lives until ctx is done.
type Opener func(ctx context.Context, c Conn) (*plait.Scheduler, error)

// env is what a command runs with.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	conn   Conn
	open   Opener
	output string // "table" or "json"
	// tty reports whether stderr is a terminal: progress is drawn only
	// there.
	tty bool
	s   *plait.Scheduler
}

// scheduler opens the store on first use, so that --help and usage errors
// need no store.
func (e *env) scheduler() (*plait.Scheduler, error) {
	if e.s != nil {
		return e.s, nil
	}
	s, err := e.open(e.ctx, e.conn)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	e.s = s
	return s, nil
}

// command is one leaf of the command tree.
type command struct {
	path  string // "runs ls"
	args  string // positional arguments, for the usage line
	short string
	// flags declares the command's own flags on fs and answers the
	// function that runs it with the positional arguments.
	flags func(fs *flag.FlagSet) func(e *env, args []string) error
}

// commands is the command tree, in the order --help lists it.
func commands() []command {
	var out []command
	for _, group := range [][]command{
		runCommands(), taskCommands(), dlqCommands(), queueCommands(), nodeCommands(),
		scheduleCommands(), statsCommands(), exportCommands(), serveCommands(), doctorCommands(),
	} {
		out = append(out, group...)
	}
	return out
}

// usageError is a bad command line: exit code 2.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// Main runs the command args names (without the program name) and answers
// its exit code. open is called once, by the first command that needs the
// store.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, open Opener) int {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, open: open, tty: isTerminal(stderr)}
	global := flag.NewFlagSet("plait", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	e.globalFlags(global)
	help := global.Bool("help", false, "")
	global.BoolVar(help, "h", false, "")
	if err := global.Parse(args); err != nil {
		fmt.Fprintf(stderr, "plait: %v\n\n", err)
		writeUsage(stderr, global)
		return ExitUsage
	}
	rest := global.Args()
	if *help || len(rest) == 0 || rest[0] == "help" {
		w := stdout
		code := ExitOK
		if !*help && (len(rest) == 0) {
			w, code = stderr, ExitUsage
		}
		writeUsage(w, global)
		return code
	}
	cmd, n := find(rest)
	if cmd == nil {
		if subs := subcommands(rest[0]); len(subs) > 0 {
			fmt.Fprintf(stderr, "plait %s: want one of: %s\n", rest[0], strings.Join(subs, ", "))
			return ExitUsage
		}
		fmt.Fprintf(stderr, "plait: unknown command %q\n\n", rest[0])
		writeUsage(stderr, global)
		return ExitUsage
	}
	fs := flag.NewFlagSet("plait "+cmd.path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.globalFlags(fs) // the global flags are accepted after the command too
	run := cmd.flags(fs)
	pos, err := parseInterleaved(fs, rest[n:])
	if errors.Is(err, flag.ErrHelp) {
		writeCommandUsage(stdout, cmd, fs)
		return ExitOK
	}
	if err == nil && e.output != "table" && e.output != "json" {
		err = fmt.Errorf("-o %q: want table or json", e.output)
	}
	if err != nil {
		fmt.Fprintf(stderr, "plait %s: %v\n", cmd.path, err)
		writeCommandUsage(stderr, cmd, fs)
		return ExitUsage
	}
	err = run(e, pos)
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "plait %s: %v\n", cmd.path, err)
		writeCommandUsage(stderr, cmd, fs)
		return ExitUsage
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	fmt.Fprintf(stderr, "plait %s: %v\n", cmd.path, err)
	return exitCode(err)
}

// globalFlags declares the flags every command takes, on fs, into e.
func (e *env) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.conn.Redis, "redis", firstNonEmpty(e.conn.Redis, os.Getenv("PLAIT_REDIS"), "redis://127.0.0.1:6379"),
		"the store's URL: redis://, rediss:// (TLS), redis+sentinel://, redis+cluster:// (env PLAIT_REDIS; default redis://127.0.0.1:6379)")
	fs.StringVar(&e.conn.Prefix, "prefix", firstNonEmpty(e.conn.Prefix, os.Getenv("PLAIT_PREFIX")),
		"the store's key prefix (env PLAIT_PREFIX)")
	fs.BoolVar(&e.conn.Cluster, "cluster", e.conn.Cluster, "read a redis:// URL as the seed of a Redis Cluster")
	fs.IntVar(&e.conn.Shards, "shards", e.conn.Shards, "the store's shard count, when it is not the default")
	fs.StringVar(&e.output, "o", firstNonEmpty(e.output, "table"), "output: table or json")
}

// parseInterleaved parses flags wherever they stand among the positional
// arguments (`runs show ID -o json`), as a user types them; "--" ends the
// flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// find answers the command the first words of args name and how many
// words it took.
func find(args []string) (*command, int) {
	cmds := commands()
	for n := min(len(args), 2); n >= 1; n-- {
		path := strings.Join(args[:n], " ")
		for i := range cmds {
			if cmds[i].path == path {
				return &cmds[i], n
			}
		}
	}
	return nil, 0
}

// subcommands answers the commands under group ("runs": ls, show...).
func subcommands(group string) []string {
	var out []string
	for _, c := range commands() {
		if sub, ok := strings.CutPrefix(c.path, group+" "); ok {
			out = append(out, sub)
		}
	}
	return out
}

func writeUsage(w io.Writer, global *flag.FlagSet) {
	fmt.Fprint(w, `plait: read and act on a plait store from a terminal or a script.

Usage:
  plait [global flags] <command> [flags] [arguments]

Commands:
`)
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.path+" "+c.args))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, strings.TrimSpace(c.path+" "+c.args), c.short)
	}
	fmt.Fprint(w, "\nGlobal flags (before or after the command):\n")
	writeFlags(w, global, nil)
	fmt.Fprint(w, `
Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 refused or needs -yes,
5 unsupported by the store, 6 doctor found a departure, 130 interrupted.
Run "plait <command> -h" for a command's flags; docs/cli.md has the rest.
`)
}

func writeCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: plait %s\n  %s\n\nFlags:\n", strings.TrimSpace(c.path+" [flags] "+c.args), c.short)
	writeFlags(w, fs, map[string]bool{"redis": true, "prefix": true, "cluster": true, "shards": true})
	fmt.Fprint(w, "  (and the global flags: -redis, -prefix, -cluster, -shards)\n")
}

// writeFlags lists fs's flags but those in skip, sorted, with their
// defaults.
func writeFlags(w io.Writer, fs *flag.FlagSet, skip map[string]bool) {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if !skip[f.Name] && f.Usage != "" {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, n := range names {
		f := fs.Lookup(n)
		def := ""
		// -redis may hold a password (from PLAIT_REDIS): its value is never printed.
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && n != "redis" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  -%s\t%s%s\n", n, f.Usage, def)
	}
	tw.Flush()
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// exitCode maps an error to the exit code scripts test.
func exitCode(err error) int {
	var ne *needsYesError
	switch {
	case errors.As(err, &ne):
		return ExitRefused
	case isDeparts(err):
		return ExitDeparts
	case errors.Is(err, plait.ErrUnsupported):
		return ExitUnsupported
	case errors.Is(err, plait.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, errRefused), errors.Is(err, plait.ErrRunActive):
		return ExitRefused
	case errors.Is(err, plait.ErrInvalidArgument):
		return ExitUsage
	}
	return ExitFailure
}

// errRefused marks an action the command or the store would not do.
var errRefused = errors.New("refused")

// needsYesError is an action stopped at its count for want of -yes.
type needsYesError struct{ n int }

func (e *needsYesError) Error() string {
	return fmt.Sprintf("%d item(s) would be acted on; run again with -yes to do it", e.n)
}
