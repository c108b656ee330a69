package main

import (
	"flag"
	"os"
	"strings"

	"github.com/wardenzk/warden/internal/cli"
	"github.com/wardenzk/warden/server"
)

// cliDoc is the cli's help under its synopsis.
var cliDoc = strings.TrimPrefix(cli.Usage, "Usage:\n") +
	"\nThe shell that replaces zkCli.sh; 'help' inside it lists its commands (docs/cli.md).\n"

// cliFlags is `warden cli`: the shell that replaces zkCli.sh. It exits
// with the command's status (0, 1, or 127 for an unknown command), like
// zkCli.sh.
func cliFlags(fs *flag.FlagSet) func(args []string) error {
	run := cli.Flags(fs)
	return func(args []string) error {
		version := strings.TrimPrefix(server.VersionLine(), "Zookeeper version: ")
		if code := run(args, os.Stdin, os.Stdout, os.Stderr, version); code != 0 {
			return &exitError{code}
		}
		return nil
	}
}
