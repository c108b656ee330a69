// Package transport moves raft messages between the members of an
// ensemble: Transport is what the raft Ready loop sends through, Handler is
// what a member receives with.
//
// Two implementations: TCP, the peer transport on the quorum port
// (server.N's first port), and Memory, an in-process network for tests
// that can drop, delay and partition messages under a seeded schedule.
package transport
