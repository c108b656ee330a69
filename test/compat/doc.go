//go:build compat

// Package compat is Warden's compatibility tier: it runs the same client scenarios
// (kazoo, go-zookeeper, zkCli.sh, the C client cli_mt, raw protocol frames, 4lw commands)
// against Apache ZooKeeper 3.8 and against Warden, normalises the two transcripts and
// fails on any difference not listed in knownDifferences.
//
// It needs the Debian packages installed by scripts/install-test-deps.sh and runs only
// with the build tag:
//
//	go test -tags compat ./test/compat/...
//
// Environment switches (development only):
//
//	WARDEN_COMPAT_ONLY=zookeeper|warden  run against one server only
//	WARDEN_COMPAT_PEER=zookeeper         compare ZooKeeper with a second ZooKeeper
//	WARDEN_COMPAT_BIN=/path/to/warden    use a prebuilt binary instead of go build
package compat
