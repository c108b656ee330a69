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
//	WARDEN_COMPAT_VERBOSE=1              log raw 4lw replies in TestFourLetterWordShapes
//
// Writing a scenario: call differential(t, extra, func(t, s) string) and return a
// transcript of "name key=value" lines; print stats field by field (czxid=..., ctime=...,
// ephemeralOwner=...) so normalize can replace zxids, times and session ids. Sort
// children lists: ZooKeeper returns them in hash-set order. Intended differences go in
// knownDifferences, with the reason. The package's TestMain lives in harness_test.go.
//
// TLS and authentication: a secureClientPort key in extra (any value) gives each server a
// TLS port on a free port of its own, Server.SecureAddr, next to the plaintext one.
// newCompatPKI (pki_test.go) makes a test's CA and stores the way operators do (openssl,
// keytool) so that ZooKeeper and Warden read the same JKS and PKCS12 files, and its
// serverConfig the zoo.cfg keys; security_test.go drives zkCli.sh, kazoo
// (security/*.py), go-zookeeper and Warden's client through them.
//
// Ensembles: startEnsemble(t, kind) (ensemble_harness_test.go) runs three members of one
// kind with Kill/Start/WaitRoles; differentialEnsemble(t, scenarios) runs scenarios against
// a ZooKeeper and a Warden ensemble and compares them after Ensemble.Normalize. Client
// programs driven step by step (kazoo_ensemble/agent.py, curator/EnsembleRecipes.java)
// speak the line protocol of ensemble_agent_test.go.
package compat
