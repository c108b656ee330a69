// Command warden is Warden's single binary: a ZooKeeper-compatible
// coordination server and its tools.
//
//	warden server [zoo.cfg]   start a server (no argument: embedded standalone default)
//	warden version            print the version
package main

import (
	"fmt"
	"os"
)

const usage = `warden — a ZooKeeper-compatible coordination service

Usage:
  warden server [flags] [zoo.cfg]   start a server; with no zoo.cfg, a standalone server
                                    on 127.0.0.1:2181 with its data in ./warden-data
  warden version                    print the version

Run 'warden server -h' for the server's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "server":
		err = runServer(os.Args[2:])
	case "version", "-version", "--version":
		err = runVersion()
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "warden: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "warden: %v\n", err)
		os.Exit(1)
	}
}
