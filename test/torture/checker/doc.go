// Package checker judges the histories the torture harness records: one
// checker per workload, each a pure function of what the clients saw
// (and, for some, of final reads taken after every fault was healed).
// A checker never weakens its check to pass: an operation whose outcome
// is unknown may or may not have taken effect, and is modelled as such.
//
// The checkers:
//
//	CheckRegisters   linearizability of read / write / compare-and-set on
//	                 registers (znodes), with porcupine, key by key
//	CheckSet         every acknowledged add survives, identically, on
//	                 every member
//	CheckQueue       every acknowledged enqueue comes out exactly once
//	                 (dequeued or drained); nothing comes out twice
//	CheckLock        fencing tokens unique and in grant order; no two
//	                 holders at once
//	CheckEphemerals  ephemerals of dead sessions gone, of live sessions
//	                 kept, identically on every member
//	CheckWatches     watch events in zxid order, never older than what
//	                 the client read, and followed by the change they
//	                 announced
//
// Every checker returns a [Result]; its Anomalies are sorted (by the key
// they concern, then by text) so two runs of a checker on one history
// say the same thing in the same order, and are cut after 20 lines with
// a count of the rest. Result.Key is the key of the first anomaly.
//
// Checkers neither keep nor modify the slices and maps they are given.
//
// Times are [Span]s of nanoseconds on one clock for the whole run. Only
// CheckRegisters reads the wall clock, and only to bound porcupine's
// search by its timeout.
package checker
