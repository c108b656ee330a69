package transport

import (
	"io"

	"go.etcd.io/raft/v3/raftpb"
)

// Handler is the local member, as a transport sees it. Its methods are
// called from the transport's goroutines and must not block for long: a
// handler queues, it does not process.
type Handler interface {
	// Deliver hands over a raft message received from a peer. A MsgSnap is
	// delivered only after its snapshot body has been stored with
	// Snapshots.Receive, so raft may install it at once.
	Deliver(m *raftpb.Message)
	// Unreachable reports that messages to peer are being dropped (its
	// queue is full, or it cannot be reached); raft then probes it
	// instead of streaming entries (raft.RawNode.ReportUnreachable).
	Unreachable(peer uint64)
	// SnapshotSent reports the outcome of sending a MsgSnap to peer
	// (raft.RawNode.ReportSnapshot): ok once the peer has stored it.
	SnapshotSent(peer uint64, ok bool)
	// PeerGone reports that peer's process is not running: a connection
	// that was up broke and its quorum port now refuses connections, or
	// resets them before the handshake's reply (the listening socket of
	// a process being killed, not yet closed). It is a hint (a dead leader can be replaced without waiting out the
	// election timeout), never a certainty; called once per outage.
	PeerGone(peer uint64)
}

// Snapshots gives a transport the snapshot bodies it streams. The body is
// the state machine's snapshot stream (fsm's format, with its own
// checksums), decompressed; a transport moves it in bounded chunks and
// never holds it whole in memory.
type Snapshots interface {
	// Open returns a reader of the body of the snapshot at meta's index
	// and term, for sending. The caller closes it.
	Open(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error)
	// Receive stores the body of a snapshot sent by the leader. It is
	// durable when Receive returns nil; an error (a short or damaged
	// body, a full disk) means nothing was stored and the MsgSnap must not
	// be delivered.
	Receive(meta *raftpb.SnapshotMetadata, body io.Reader) error
}

// Transport carries raft messages between the members of one ensemble.
//
// Send never blocks the caller (the raft Ready loop): each peer has a
// bounded queue, and a message that does not fit is dropped and the peer
// reported Unreachable; raft retransmits what matters. Messages to one
// peer leave in the order they were sent. A MsgSnap carries only the
// snapshot's metadata (raftpb.Snapshot.Data is empty): the transport
// streams the body from Snapshots.Open and reports the outcome with
// Handler.SnapshotSent.
//
// The peer set changes at run time with SetPeers (dynamic
// reconfiguration): a transport talks only to its current peers.
type Transport interface {
	// Start begins delivering received messages to h. It is called once,
	// before the first Send.
	Start(h Handler) error
	// Send queues msgs for their peers (Message.To). Messages to an
	// unknown peer are dropped. The transport owns msgs after the call.
	Send(msgs []*raftpb.Message)
	// SetPeers replaces the peer set: peers maps the raft id of every
	// other member to the address of its quorum port, as
	// TCPConfig.Peers does, and the transport keeps a copy. A new peer is
	// connected to; a removed one is disconnected both ways, what was
	// queued for it is dropped (a MsgSnap reported with SnapshotSent
	// false), and its connections are refused from then on; a peer whose
	// address changed is reconnected at the new address, its queue
	// dropped likewise; a peer whose address is unchanged keeps its
	// connections and queue. Messages to or from a member outside the set
	// are dropped. SetPeers may be called from any goroutine, before or
	// after Start and concurrently with Send; after Close it does
	// nothing. An invalid set (this member's own id or id 0; for TCP, an
	// address that is not host:port) is an error wrapping
	// ErrInvalidConfig, and changes nothing.
	SetPeers(peers map[uint64]string) error
	// Close stops sending and receiving and waits for the transport's
	// goroutines; Send after Close drops everything.
	Close() error
}
