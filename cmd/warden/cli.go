package main

import (
	"os"
	"strings"

	"github.com/wardenzk/warden/internal/cli"
	"github.com/wardenzk/warden/server"
)

// runCLI is `warden cli`: the shell that replaces zkCli.sh. It exits with
// the command's status (0, 1, or 127 for an unknown command), like zkCli.sh.
func runCLI(args []string) error {
	version := strings.TrimPrefix(server.VersionLine(), "Zookeeper version: ")
	if code := cli.Main(args, os.Stdin, os.Stdout, os.Stderr, version); code != 0 {
		os.Exit(code)
	}
	return nil
}
