// Command warden is Warden's single binary: a ZooKeeper-compatible
// coordination server and its tools.
//
//	warden server [zoo.cfg]   start a server (no argument: embedded standalone default)
//	warden cli                the interactive shell (zkCli.sh's commands and more)
//	warden bench              the load generator (docs/performance.md)
//	warden status             the health of an ensemble, from four-letter words
//	warden snapshot|wal       inspect the data and log directories
//	warden import-zk          migrate an Apache ZooKeeper data directory
//	warden container          the Docker image's entrypoint (docs/docker.md)
//	warden health             exit 0 when a server is serving (the image's HEALTHCHECK)
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
  warden cli [-server h:p,...] [cmd] the shell: zkCli.sh's commands, and more (see docs/cli.md)
  warden bench [flags]              load-test any ZooKeeper-protocol server (warden bench -h)
  warden status [-timeout d] [-json] host:port[,host:port...]
                                    each member's mode, zxid and lag, the leader and
                                    the quorum (also against Apache ZooKeeper)
  warden snapshot inspect|dump FILE show a snapshot file
  warden wal dump DIR               show a write-ahead log
  warden import-zk ZKDATA WARDENDATA
                                    migrate an Apache ZooKeeper data directory
  warden container [server flags]   the Docker image's entrypoint: zoo.cfg and myid from
                                    the official image's ZOO_* variables, then the server
  warden health [host:port]         exit 0 when the server (127.0.0.1:2181) is serving
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
	case "cli":
		err = runCLI(os.Args[2:])
	case "bench":
		err = runBench(os.Args[2:])
	case "status":
		err = runStatus(os.Args[2:])
	case "snapshot":
		err = runSnapshot(os.Args[2:])
	case "wal":
		err = runWAL(os.Args[2:])
	case "import-zk":
		err = runImportZK(os.Args[2:])
	case "container":
		err = runContainer(os.Args[2:])
	case "health":
		err = runHealth(os.Args[2:])
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
