// Command wardencli runs cli.Main, for the package's tests (the warden
// binary gains `warden cli` through cmd/warden).
package main

import (
	"os"

	"github.com/wardenzk/warden/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, "test"))
}
