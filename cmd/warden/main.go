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
//	warden completion         print a bash, zsh or fish completion script
//	warden help [command]     print the usage of a command
//
// The commands are a table (commands.go): every one answers -h on stdout
// with status 0, takes part in `warden help` and in shell completion.
package main

import "os"

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}
