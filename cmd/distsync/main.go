// Command distsync is the command-line face of distsync: a guided tour of the
// primitives on an in-process server (demo), a distributed flock(1) (run),
// and the operator's tools for a stuck lock (inspect, unlock) and for a quick
// measurement of a server (bench).
//
// Run "distsync help" for the commands and exit codes, and
// "distsync COMMAND --help" for each command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/distsync/distsync"
)

// Exit codes. As flock(1), run exits 1 on a conflict (-E changes it) and
// takes its other codes from sysexits.h, where commands rarely land; a
// command run by "distsync run" passes its own exit code through.
const (
	exitOK          = 0
	exitFailure     = 1   // any other failure (a Redis error, a refused confirmation)
	exitNotAcquired = 1   // run: the lock or permit was not had within --wait, as flock's conflict (-E changes it)
	exitUsage       = 64  // EX_USAGE: bad flags or arguments (a --db the server lacks)
	exitState       = 65  // EX_DATAERR: NAME holds another kind, or a semaphore of another size
	exitUnavailable = 69  // EX_UNAVAILABLE: cannot connect to Redis
	exitLeaseLost   = 70  // EX_SOFTWARE: run lost its lease; the command was stopped
	exitCannotExec  = 126 // run: the command was found but could not be executed
	exitNotFound    = 127 // run: the command was not found
)

const exitCodesHelp = `Exit codes:
  0     success
  1     run: not acquired within --wait (taken, with -n or --wait 0), as
        flock's conflict, and as silently (-v says so); -E sets another.
        Any command: another failure (a Redis error, a declined
        confirmation)
  64    usage error: bad flags or arguments, a database (--db) the server
        does not have
  65    NAME holds another kind of primitive (run, inspect --kind, unlock,
        delete), or run --semaphore's NAME has another number of permits
  69    cannot connect to Redis
  70    run: the lease was lost while the command ran; the command was stopped
  126   run: the command could not be executed
  127   run: the command was not found
  128+N interrupted by signal N (130 for SIGINT) before the command ran, or in
        demo and bench
  other run: the command's own exit code, or 128+N when signal N ended it
`

// cli is one invocation: where it reads and writes, and its environment.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

type command struct {
	name    string
	summary string
	run     func(c *cli, args []string) error
}

// commands in the order "distsync help" lists them.
var commands = []command{
	{"demo", "a tour of the primitives, on an in-process server unless --redis", (*cli).demo},
	{"run", "run a command while holding a lock or a semaphore permit", (*cli).runCmd},
	{"inspect", "show what holds a lock, semaphore, latch or election", (*cli).inspect},
	{"list", "list the names held or waited for (scans the keyspace)", (*cli).list},
	{"unlock", "delete a lock whoever holds it, depose a leader (--force)", (*cli).unlock},
	{"delete", "delete a semaphore or a latch", (*cli).deleteCmd},
	{"bench", "measure uncontended, contended and handoff locking", (*cli).bench},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == guardCommand {
		os.Exit(guardMain(os.Args[2:]))
	}
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(c.main(os.Args[1:]))
}

// main runs the command args name and returns the exit code.
func (c *cli) main(args []string) int {
	if len(args) == 0 {
		c.usage(c.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return c.main([]string{args[1], "--help"})
		}
		c.usage(c.stdout)
		return exitOK
	case "version", "-V", "--version", "-version":
		fmt.Fprintf(c.stdout, "distsync %s\n", version())
		return exitOK
	}
	for _, cmd := range commands {
		if cmd.name == args[0] {
			return c.exit(cmd.name, cmd.run(c, args[1:]))
		}
	}
	if strings.HasPrefix(args[0], "-") {
		// One line, with the flag's name only: its value may be a password.
		flag, _, _ := strings.Cut(args[0], "=")
		for _, a := range args[1:] {
			if slices.ContainsFunc(commands, func(cmd command) bool { return cmd.name == a }) {
				fmt.Fprintf(c.stderr, "distsync: flags go after the command: distsync %s %s ...\n", a, flag)
				return exitUsage
			}
		}
		fmt.Fprintf(c.stderr, "distsync: flags go after the command (%q is not one); run 'distsync help' for the commands\n", flag)
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "distsync: unknown command %q\n\n", args[0])
	c.usage(c.stderr)
	return exitUsage
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, "distsync: distributed locks, semaphores and latches on Redis\n\nUsage:\n  distsync COMMAND [flags] [arguments]\n  distsync --version\n\nCommands:\n")
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-8s  %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprint(w, "\nRun \"distsync COMMAND --help\" for a command's flags.\n\n")
	fmt.Fprint(w, connHelp, "\n", exitCodesHelp)
}

// exitError carries an exit code; a nil err prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode returns err with exit code code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// usageErrorf reports bad usage of command name.
func usageErrorf(name, format string, args ...any) error {
	return withCode(exitUsage, fmt.Errorf(format+"\nRun 'distsync %s --help' for usage.", append(args, name)...))
}

// interruptible returns a context that SIGINT or SIGTERM cancels, with a
// signalError as its cause, and the function that stops listening.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case s := <-sigs:
			cancel(signalError{s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		<-exited
		cancel(nil)
	}
}

// interrupted returns the exit error of a command that ctx's signal
// interrupted (128+N, 130 for SIGINT), or nil.
func interrupted(ctx context.Context) error {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return withCode(se.code(), fmt.Errorf("interrupted by %v", se.sig))
	}
	return nil
}

// errHelp is returned after a command printed its --help.
var errHelp = errors.New("help printed")

// exit prints err (if any) and returns its exit code: the one err carries,
// 64 for an argument the library refused (an invalid name, a count out of
// range), 65 for a name of another kind, 1 otherwise.
func (c *cli) exit(name string, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	code := exitFailure
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
		if ee.err == nil {
			return code
		}
	case errors.Is(err, distsync.ErrInvalidName), errors.Is(err, distsync.ErrInvalidArgument):
		code = exitUsage
	case errors.Is(err, distsync.ErrWrongKind):
		code = exitState
	}
	fmt.Fprintf(c.stderr, "distsync %s: %s\n", name, errText(err))
	return code
}

// errText is err's message for a line that begins "distsync COMMAND: ":
// without the "distsync: " that the library's errors begin with, at any
// depth of wrapping, so that the line has one prefix.
func errText(err error) string { return strings.ReplaceAll(err.Error(), "distsync: ", "") }

// reworded is an error with another message that still wraps the cause.
type reworded struct {
	msg string
	err error
}

func (r reworded) Error() string { return r.msg }

func (r reworded) Unwrap() error { return r.err }

// version is what --version prints: the module version the binary was
// built from ("v0.1.0", or the pseudo-version Go gives a build in a
// repository), else, for a source build without one, "source" and the VCS
// revision, whether the tree was modified, and the commit's date.
func version() string { return versionOf(debug.ReadBuildInfo()) }

func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "unknown (built without module information)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		if rev != "" && !strings.Contains(v, rev) {
			v += fmt.Sprintf(" (%s%s)", rev, dirty)
		}
		return v
	}
	if rev == "" {
		return "source build (no version recorded: go run records none; go build and go install record the commit in a git clone, not in a git worktree, outside a repository or with -buildvcs=false)"
	}
	v := "source " + rev + dirty
	if at != "" {
		v += " " + at
	}
	return v
}

// flags is a command's flag set with distsync's usage format ("--name").
type flags struct {
	*flag.FlagSet
	name   string
	usage  string              // the synopsis and description, before the flags
	conn   map[string]bool     // the connection flags, listed apart
	short  map[string][]string // flag name -> its aliases (flock's spellings)
	isTiny map[string]bool     // the aliases, listed with the flags they name
}

func newFlags(name, usage string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, name: name, usage: usage, short: map[string][]string{}, isTiny: map[string]bool{}}
}

// alias makes alias another name of the flag name, as flock(1) spells
// it: -x beside --exclusive, --timeout beside --wait, --verbose beside -v.
func (f *flags) alias(alias, name string) {
	fl := f.Lookup(name)
	f.Var(fl.Value, alias, fl.Usage)
	f.short[name] = append(f.short[name], alias)
	f.isTiny[alias] = true
}

// spelled is how the usage lists the flag name and its aliases: the
// one-letter ones first, then the flag's own name, then the longer ones,
// e.g. "-w, --wait, --timeout".
func (f *flags) spelled(name string) string {
	dash := func(n string) string {
		if len(n) == 1 {
			return "-" + n
		}
		return "--" + n
	}
	var short, long []string
	for _, a := range f.short[name] {
		if len(a) == 1 {
			short = append(short, dash(a))
		} else {
			long = append(long, dash(a))
		}
	}
	return strings.Join(append(append(short, dash(name)), long...), ", ")
}

// set reports whether the flag name (or its alias) was given.
func (f *flags) set(name string) bool {
	found := false
	f.Visit(func(fl *flag.Flag) {
		if fl.Name == name || slices.Contains(f.short[name], fl.Name) {
			found = true
		}
	})
	return found
}

// parse parses args and returns the positional arguments. With interspersed,
// flags may also follow positional arguments (until a "--"); without, the
// first positional argument ends the flags (run's command). --help prints
// the usage to stdout and returns errHelp.
func (f *flags) parse(c *cli, args []string, interspersed bool) ([]string, error) {
	var pos []string
	args = f.getopt(args, interspersed)
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printUsage(c.stdout)
				return nil, errHelp
			}
			return nil, usageErrorf(f.name, "%s", longFlagNames.ReplaceAllString(err.Error(), "$1--$2"))
		}
		rest := f.Args()
		consumed := len(args) - len(rest)
		if !interspersed || len(rest) == 0 || (consumed > 0 && args[consumed-1] == "--") {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// getopt spells out args' bundles of one-letter flags as getopt(3) reads
// them: -xn is -x -n, -w5 is -w 5, -nE 3 is -n -E 3, and -xq is -x -q (an
// unknown -q). An argument that names a flag (-nb, -wait) is left whole, as
// are flags' values, what follows "--" and, without interspersed, what
// follows the first positional argument.
func (f *flags) getopt(args []string, interspersed bool) []string {
	out := make([]string, 0, len(args))
	takesValue := func(fl *flag.Flag) bool {
		b, ok := fl.Value.(interface{ IsBoolFlag() bool })
		return !ok || !b.IsBoolFlag()
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--", !interspersed && (len(a) < 2 || a[0] != '-'):
			return append(out, args[i:]...)
		case len(a) < 2 || a[0] != '-':
			out = append(out, a)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if fl := f.Lookup(name); fl != nil || a[1] == '-' || len(a) == 2 {
			out = append(out, a)
			if fl != nil && !inline && takesValue(fl) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			out = append(out, "-"+a[j:j+1])
			fl := f.Lookup(a[j : j+1])
			if fl == nil || !takesValue(fl) {
				continue
			}
			if j+1 < len(a) {
				out = append(out, a[j+1:])
			} else if i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			break
		}
	}
	return out
}

// longFlagNames finds "-name" in the flag package's errors, to say "--name".
var longFlagNames = regexp.MustCompile(`(flag:? |defined: )-([a-z][a-z0-9-]+)`)

// printUsage writes the usage text and the flags: the command's, then the
// connection flags.
func (f *flags) printUsage(w io.Writer) {
	fmt.Fprint(w, f.usage)
	if !strings.HasSuffix(f.usage, "\n") {
		fmt.Fprintln(w)
	}
	for _, section := range []struct {
		title string
		conn  bool
	}{{"Flags", false}, {"Connection flags", true}} {
		first := true
		f.VisitAll(func(fl *flag.Flag) {
			if f.conn[fl.Name] != section.conn || f.isTiny[fl.Name] {
				return
			}
			if first {
				fmt.Fprintf(w, "\n%s:\n", section.title)
				first = false
			}
			typ, help := flag.UnquoteUsage(fl)
			name := f.spelled(fl.Name)
			if typ != "" {
				name += " " + typ
			}
			line := fmt.Sprintf("  %-20s %s", name, help)
			if len(name) > 20 {
				line = fmt.Sprintf("  %s\n  %-20s %s", name, "", help)
			}
			if d := fl.DefValue; d != "" && d != "false" && d != "0" {
				line += fmt.Sprintf(" (default %s)", d)
			}
			fmt.Fprintln(w, line)
		})
	}
}
