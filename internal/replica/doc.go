// Package replica orders write proposals into a log and hands committed
// entries, in log order, to the state machine of every server.
//
// Standalone is the ensemble of one: it commits every proposal as soon as
// it is queued (no durability yet: the durable-log issue replaces its inside
// with a single-member go.etcd.io/raft/v3 group and our WAL, keeping this
// contract). Apply is called from one goroutine, in index order, with the
// raft term of the entry; the state machine derives zxids from it.
package replica
