// Package transport moves raft messages between the members of an
// ensemble: Transport is what the raft Ready loop sends through, Handler is
// what a member receives with.
//
// Two implementations: TCP, the peer transport on the quorum port
// (server.N's first port), and Memory, an in-process network for tests
// that can drop, delay and partition messages under a seeded schedule.
// Both talk only with their current peers, which SetPeers changes at run
// time.
//
// # Using TCP
//
// NewTCP(TCPConfig{...}) listens on the quorum port; Start(handler) begins
// accepting peers and dialling them; the Ready loop calls Send with each
// Ready's messages; Close stops everything and waits for it. Send never
// blocks: each peer has a bounded queue (TCPConfig.QueueLen), and what does
// not fit, or cannot be sent because the peer is down, is dropped and the
// peer reported with Handler.Unreachable (raft then probes it and
// retransmits). TCPConfig.ServerTLS, PortUnification and DialTLS put the
// quorum port under TLS (see TLS).
//
// # Connections
//
// Each member dials each of its peers and keeps that connection for its
// own messages to the peer: a pair of members has two TCP connections,
// one per direction, and messages to a peer are written in the order they
// were sent. The dialer writes hello, messages and snapshots; the acceptor
// writes only the handshake reply and snapshot acks. When a connection
// breaks, the dialer redials with exponential backoff and jitter
// (TCPConfig.MinBackoff to MaxBackoff); messages queued meanwhile are
// dropped. An acceptor keeps one connection per peer: a newer one from
// the same peer closes the older.
//
// # Frames
//
// Both directions are a sequence of frames:
//
//	 0                4      5
//	+----------------+------+--------------------------+
//	| length uint32  | kind | payload (length-1 bytes) |
//	+----------------+------+--------------------------+
//	  big-endian
//
// length counts the kind byte and the payload, so it is at least 1. It is
// at most 64 KiB before the handshake and in everything the dialer reads,
// and at most 64 MiB for the frames the acceptor reads after it.
//
//	kind  name           from      payload
//	   1  hello          dialer    see below; the first frame of a connection
//	   2  reply          acceptor  status byte (0 accepted, 1 refused), reason (UTF-8, rest)
//	   3  message        dialer    protobuf raftpb.Message
//	   4  snapshot chunk dialer    the next bytes of a snapshot body (TCPConfig.SnapshotChunk at most)
//	   5  snapshot end   dialer    empty: the body is complete
//	   6  snapshot ack   acceptor  status byte (0 stored, 1 not), index uint64, reason (rest)
//
// The hello:
//
//	 0          8         10          18            26
//	+----------+---------+-----------+-------------+-------------------------+
//	| WRDNPEER | version | sender id | receiver id | ensemble identity (rest)|
//	| magic    | uint16  | uint64    | uint64      | at most 1024 bytes      |
//	+----------+---------+-----------+-------------+-------------------------+
//	  all integers big-endian; version is 1
//
// # Handshake
//
// The dialer sends its hello, inside TLS when the connection is TLS (see
// TLS), and waits for the reply; TCPConfig.HandshakeTimeout bounds the
// TLS handshake and the hello together, on both sides. The acceptor
// refuses, with a reason both sides log at Warn, a hello whose version it
// does not speak, whose ensemble identity is not its own ("peer from
// another ensemble (or with different server lines)", or, when one of the
// two is DynamicEnsemble, "reconfigEnabled must be the same on every
// member"), whose sender id is its own ("duplicate myid"), whose receiver
// id is not its own ("peer thinks it is talking to member X but this is
// member Y"), or whose sender is not one of its current peers ("unknown
// member id X: not a member of this ensemble (removed, or not yet
// added)"). A refused dialer backs off and tries again.
//
// DynamicEnsemble aside, the identity is opaque to the transport. A
// server with a static membership derives it from its server lines (ids
// and roles), so members configured differently refuse each other. With
// dynamic reconfiguration (reconfigEnabled=true) it is DynamicEnsemble on
// every member, since a joining member's server lines differ from the
// others' until its addition commits: who may connect is then decided by
// the peer set alone.
//
// # Membership changes
//
// SetPeers replaces the peer set while the transport runs, from any
// goroutine, before or after Start. A new peer gets its queue and sender
// and is dialled at once. A removed peer's sender stops, what was queued
// for it is dropped (a MsgSnap reported with SnapshotSent(false)), its
// connections both ways are closed, a dial or handshake in progress
// included, and its hellos are refused from then on. A peer whose address
// changed is removed and added again: redialled at the new address, its
// queue dropped. A peer whose address is the same keeps its connections
// and queue. A member being added dials the others before they have
// added it, and one removed may not know it yet, so both keep redialling:
// their refusals are logged at Warn once a minute per member id, at Debug
// otherwise.
//
// # Snapshots
//
// A MsgSnap carries only the snapshot's metadata. The dialer opens the
// body with Snapshots.Open and writes the message frame, the body in chunk
// frames, and an end frame, on the same connection and in order with the
// other messages. The acceptor streams the chunks through a pipe into
// Snapshots.Receive, running on its own goroutine, so a body is never held
// whole in memory. At the end frame it waits for Receive; if Receive
// returned nil having read the whole body, it delivers the MsgSnap, and
// only then reads the next frame. Either way it sends a snapshot ack
// naming the snapshot's index, and the dialer reports the ack with
// Handler.SnapshotSent:
//
//	dialer                                  acceptor
//	  message (MsgSnap) ───────────────────▶  start Receive(meta, pipe)
//	  chunk, chunk, ... ───────────────────▶  pipe ──▶ Receive
//	  snapshot end      ───────────────────▶  close pipe; wait for Receive
//	                                          nil: Deliver(MsgSnap)
//	  SnapshotSent(ok)  ◀─────────────────── snapshot ack (stored or not, reason)
//
// The dialer does not wait for the ack before sending its next messages.
// A connection that ends with acks outstanding reports each of those
// snapshots as not sent. A dialer that cannot read a body to the end
// closes the connection; a connection that ends inside a body fails the
// pipe, so Receive returns an error and nothing is delivered.
//
// # TLS
//
// With TCPConfig.ServerTLS and DialTLS (zoo.cfg's sslQuorum), a
// connection is TLS from its first byte: the dialer opens it with a TLS
// handshake, and everything drawn above (hello, reply, messages, snapshot
// bodies, acks) travels as TLS application data, encrypted and
// authenticated both ways. The caller's TLS configurations decide who may
// connect: for sslQuorum, both sides present a certificate of the quorum
// keystore and verify the other's against the quorum trust store, and the
// dialer checks the acceptor's certificate against the host of its server
// line. Which member a connection comes from is still decided by the
// hello, as without TLS, and logs still name the remote TCP address.
//
// The first byte of an accepted connection decides what it speaks:
//
//	                   first byte 0x16            any other first byte (a hello
//	                   (a TLS handshake record)   starts with 0x00, its length's high byte)
//	plaintext only     closed                     hello
//	TLS only           TLS handshake, hello       hello refused, in plaintext
//	port unification   TLS handshake, hello       hello
//
// (ServerTLS nil: plaintext only; ServerTLS: TLS only; ServerTLS and
// PortUnification: port unification.) Reading that byte, the TLS
// handshake and the hello share the one HandshakeTimeout, so a connection
// that sends nothing, or half of either handshake, is closed when it
// expires. A plaintext hello on a TLS-only port is read and refused with a
// plaintext reply that says why, so the dialer logs it too; a TLS
// handshake on a plaintext-only port is closed at once, and the dialer
// sees its handshake cut. A TLS handshake that fails (no certificate, one
// whose CA is not trusted, expired, for another host) closes the
// connection. Each side logs these at Warn with the reason in plain words
// and the setting to check, the acceptor once a minute per remote host
// and reason, the dialer once per failure burst; the dialer backs off and
// retries as after any failed dial.
//
// The configurations are used as they are, at each handshake: a ServerTLS
// whose GetConfigForClient or GetCertificate serves a reloaded
// certificate, or a DialTLS that returns a new configuration, takes effect
// on the next connection; connections already up keep theirs.
//
// TLS is enabled on a running ensemble ZooKeeper's way, restarting one
// member at a time, in three rounds, each done on every member before
// the next:
//
//	step  zoo.cfg                                    dials      accepts
//	0     neither                                    plaintext  plaintext
//	1     portUnification=true                       plaintext  both
//	2     portUnification=true, sslQuorum=true       TLS        both
//	3     sslQuorum=true                             TLS        TLS
//
// Two members at most one step apart reach each other both ways, so the
// ensemble keeps its quorum throughout; two steps apart they do not (a
// member at step 2 dials TLS to a plaintext-only port at step 0).
// Disabling TLS walks the same steps backwards.
//
// # Failures
//
// TLS failures are told under TLS. Bytes that break the protocol — a
// missing magic, a frame above the limit or of length 0, an unknown kind,
// an undecodable message, chunks outside a snapshot — close that
// connection with one Warn line naming the remote address; the transport
// goes on with its other connections.
// A message whose From is not the handshake's sender, or whose To is not
// this member, is dropped with a Warn line (a MsgSnap's body is then
// discarded and acked as not stored). Repeated Warn lines for the same
// remote host and reason (for a member that is not a peer, the same
// member id) are kept to one a minute; a peer going down and coming back
// is one line each.
package transport
