package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// A command is one word of warden's command line: a subcommand such as
// `server`, or a subcommand of one such as `snapshot inspect`. The
// dispatcher parses a command's flags itself, so every command answers
// -h, -help and --help with its usage on stdout and exit status 0, and a
// bad flag with the usage on stderr and status 2; `warden help <command>`
// and shell completion come from the same table.
//
// Adding a command is one entry in commands (below):
//
//	{name: "health", args: "[flags] host:port", summary: "…", setup: healthFlags}
//
// where setup registers the flags and returns the function that runs
// with the arguments left after them:
//
//	func healthFlags(fs *flag.FlagSet) func(args []string) error {
//		timeout := fs.Duration("timeout", time.Second, "…")
//		return func(args []string) error { … }
//	}
//
// A command without flags uses noFlags(run).
type command struct {
	// name is the word that selects the command.
	name string
	// args is the synopsis after the command's path, e.g. "[flags] FILE".
	args string
	// summary is one line for warden's usage and shell completion.
	summary string
	// doc, optional, is printed under the synopsis in the command's help.
	doc string
	// setup registers the command's flags on fs and returns its run
	// function, which gets the arguments after the flags. It may replace
	// fs.Usage. nil for a command that only groups subs.
	setup func(fs *flag.FlagSet) func(args []string) error
	// subs are the command's own subcommands, selected by the next word.
	subs []*command
}

// commands is warden's command table, in the order the usage lists them.
// It is filled in by init, because help and completion read it.
var commands []*command

func init() {
	commands = []*command{
		{name: "server", args: "[flags] [zoo.cfg]", summary: "start a server (no zoo.cfg: standalone on 127.0.0.1:2181, data in ./warden-data)",
			doc: serverDoc, setup: serverFlags},
		{name: "cli", args: "[flags] [command [args]]", summary: "the shell: zkCli.sh's commands, and more (docs/cli.md)",
			doc: cliDoc, setup: cliFlags},
		{name: "bench", args: "[flags]", summary: "load-test any ZooKeeper-protocol server (docs/performance.md)",
			setup: benchFlags, subs: []*command{
				{name: "report", args: "[flags] result.json...", summary: "compare the JSON results of several runs as Markdown",
					setup: benchReportFlags},
			}},
		{name: "status", args: "[flags] host:port[,host:port...]", summary: "each member's mode, zxid and lag, the leader and the quorum",
			doc: statusDoc, setup: statusFlags},
		{name: "snapshot", args: "inspect|dump|restore ...", summary: "show a snapshot file", doc: snapshotDoc, subs: []*command{
			{name: "inspect", args: "FILE", summary: "summarize a snapshot: raft metadata, zxid, counts and sizes",
				doc: snapshotDoc, setup: noFlags(runSnapshotInspect)},
			{name: "dump", args: "FILE", summary: "print a snapshot's sessions and every node",
				doc: snapshotDoc, setup: noFlags(runSnapshotDump)},
			{name: "restore", args: "[flags] FILE DATADIR", summary: "write a backup snapshot as the first snapshot of a new data directory",
				doc: snapshotDoc, setup: snapshotRestoreFlags},
		}},
		{name: "wal", args: "dump DIR", summary: "show a write-ahead log", subs: []*command{
			{name: "dump", args: "DIR", summary: "print every record of a write-ahead log", doc: walDoc,
				setup: noFlags(runWALDump)},
		}},
		{name: "import-zk", args: "[flags] ZKDATA WARDENDATA", summary: "migrate an Apache ZooKeeper data directory",
			doc: importZKDoc, setup: importZKFlags},
		{name: "container", args: "[flags] | COMMAND [args]", summary: "the Docker image's entrypoint: zoo.cfg and myid from ZOO_* variables, then the server",
			doc: containerDoc, setup: containerFlags},
		{name: "health", args: "[flags] [host:port]", summary: "exit 0 when a server (127.0.0.1:2181) is serving: the image's HEALTHCHECK",
			doc: healthDoc, setup: healthFlags},
		{name: "version", args: "[-short]", summary: "print Warden's version, its Go and the ZooKeeper version it reports",
			setup: versionFlags},
		{name: "completion", args: "bash|zsh|fish", summary: "print a shell completion script", doc: completionDoc,
			subs: completionCommands()},
		{name: "help", args: "[command...]", summary: "show the usage of warden or of a command"},
	}
}

// noFlags adapts a command without flags.
func noFlags(run func(args []string) error) func(*flag.FlagSet) func([]string) error {
	return func(*flag.FlagSet) func([]string) error { return run }
}

// usageError is a bad command line: the dispatcher prints it and the
// command's usage on stderr and exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// badUsage returns a usageError; the message says what is wrong.
func badUsage(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}

// exitError ends warden with a status and no message of its own (the
// command has said what it had to).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// lookup returns the sub of cmds named name, or nil.
func lookup(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// dispatch runs warden's command line (args without the program name)
// and returns the exit status: 0, 1 when a command failed, 2 for a usage
// error. Help goes to stdout, errors to stderr.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeRootUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		writeRootUsage(stdout)
		return 0
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	case "help":
		return help(args[1:], stdout, stderr)
	}
	cmds, path := commands, "warden"
	var cmd *command
	for len(args) > 0 {
		next := lookup(cmds, args[0])
		if next == nil {
			break
		}
		cmd, cmds, path, args = next, next.subs, path+" "+next.name, args[1:]
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "warden: unknown command %q\n\n", args[0])
		writeRootUsage(stderr)
		return 2
	}
	fs, run := newFlagSet(path, cmd)
	if run == nil { // a group: the next word should have been a sub
		if len(args) > 0 && isHelpFlag(args[0]) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		if len(args) > 0 {
			fmt.Fprintf(stderr, "%s: unknown command %q\n\n", path, args[0])
		}
		fs.SetOutput(stderr)
		fs.Usage()
		return 2
	}
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		stdout.Write(usage.Bytes())
		return 0
	case err != nil: // the flag package wrote the error and the usage
		stderr.Write(usage.Bytes())
		return 2
	}
	fs.SetOutput(stderr)
	err = run(fs.Args())
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n\n", path, err)
		fs.Usage()
		return 2
	case errors.As(err, &ee):
		return ee.code
	}
	fmt.Fprintf(stderr, "warden: %v\n", err)
	return 1
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// help is `warden help [command...]`: the usage of warden or of the
// command the words name, on stdout.
func help(words []string, stdout, stderr io.Writer) int {
	if len(words) == 0 {
		writeRootUsage(stdout)
		return 0
	}
	if isHelpFlag(words[len(words)-1]) { // warden help [command] -h
		words = words[:len(words)-1]
		if len(words) == 0 {
			words = []string{"help"}
		}
	}
	cmds, path := commands, "warden"
	var cmd *command
	for _, w := range words {
		next := lookup(cmds, w)
		if next == nil {
			fmt.Fprintf(stderr, "warden help: unknown command %q (try 'warden help')\n", strings.TrimSpace(path[len("warden"):]+" "+w))
			return 2
		}
		cmd, cmds, path = next, next.subs, path+" "+next.name
	}
	fs, _ := newFlagSet(path, cmd)
	fs.SetOutput(stdout)
	fs.Usage()
	return 0
}

// newFlagSet returns cmd's flag set, named path, with its usage, and cmd's
// run function (nil for a group).
func newFlagSet(path string, cmd *command) (*flag.FlagSet, func([]string) error) {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.Usage = func() { writeUsage(fs.Output(), path, cmd, fs) }
	var run func([]string) error
	if cmd.setup != nil {
		run = cmd.setup(fs)
	}
	return fs, run
}

// writeUsage writes a command's help: synopsis, doc, subcommands, flags.
func writeUsage(w io.Writer, path string, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s %s\n", path, cmd.args)
	if cmd.doc != "" {
		fmt.Fprintf(w, "\n%s", cmd.doc)
	} else {
		fmt.Fprintf(w, "\n%s%s.\n", strings.ToUpper(cmd.summary[:1]), cmd.summary[1:])
	}
	if len(cmd.subs) > 0 {
		fmt.Fprintf(w, "\nCommands:\n")
		writeCommandList(w, path, cmd.subs)
	}
	if hasFlags(fs) {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.PrintDefaults()
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

func writeCommandList(w io.Writer, path string, cmds []*command) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cmds {
		fmt.Fprintf(tw, "  %s %s\t%s\n", path, c.name, c.summary)
	}
	tw.Flush()
}

func writeRootUsage(w io.Writer) {
	fmt.Fprint(w, "warden — a ZooKeeper-compatible coordination service\n\nUsage: warden <command> [flags] [args]\n\nCommands:\n")
	writeCommandList(w, "warden", commands)
	fmt.Fprint(w, "\nRun 'warden help <command>' or 'warden <command> -h' for a command's flags and arguments,\n"+
		"'warden --version' for the version.\n")
}
