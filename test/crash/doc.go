// Package crash holds Warden's process-level crash tests: they build the
// warden binary, run `warden server zoo.cfg` as a child process, kill it
// with SIGKILL at random points while clients write, restart it on the same
// data directory and check that every acknowledged write survived, with
// versions that never go backwards.
//
// They run in a plain `go test ./...` (no build tag) and need only the Go
// toolchain: the binary is built into a temporary directory per run.
package crash
