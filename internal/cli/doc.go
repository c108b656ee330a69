// Package cli is `warden cli`, the shell that replaces zkCli.sh: every
// zkCli.sh 3.8 command with its flags and output format, plus tree, watch,
// lock, elect, export and import, over package client (so it works against
// Warden and Apache ZooKeeper alike).
//
// The package has three layers:
//
//   - Shell runs command lines against one session: Exec(ctx, line) parses
//     a line the way zkCli.sh does (white space separates arguments, single
//     or double quotes group them), runs it and writes zkCli.sh's output to
//     Config.Out and its error messages to Config.Err. Watch events arrive on
//     other goroutines and are written through the same writer lock, as
//     "WATCHER::" blocks exactly as zkCli.sh prints them.
//   - Interactive wraps a Shell in a line editor (github.com/reeflective/
//     readline): history in ~/.warden_history, completion of commands,
//     flags and znode paths read live from the server, and watch events
//     printed above the prompt without breaking the line being typed.
//   - Main is the command line of `warden cli`: flags, then the
//     interactive shell, one command (exit status like zkCli.sh: 0 success,
//     1 failure, 127 unknown command) or a script (-c file).
//
// Output: command output goes to Out, errors to Err. Unlike zkCli.sh,
// "Created /path" is written to Out (zkCli.sh writes it to stderr), so
// `path=$(warden cli create -s /q/item-)` works. Read commands take
// --json for machine-readable output; colours are used only when Out is a
// terminal and NO_COLOR is unset.
package cli
