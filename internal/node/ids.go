package node

import "strconv"

// MemberID is a server's id as the user writes it: N of server.N in
// zoo.cfg and the content of dataDir/myid (0 for a standalone server
// without a myid). Raft ids are derived from it in exactly one place,
// RaftID, because raft reserves 0.
type MemberID int64

// RaftID returns the raft id of the member: myid + 1.
func (id MemberID) RaftID() uint64 { return uint64(id) + 1 }

// MemberOf returns the member whose raft id is r (the inverse of RaftID).
func MemberOf(r uint64) MemberID { return MemberID(r) - 1 }

func (id MemberID) String() string { return strconv.FormatInt(int64(id), 10) }

// Member is one member of the ensemble.
type Member struct {
	ID MemberID
	// Observer members are raft learners: they replicate and serve
	// clients but never vote.
	Observer bool
}

// Role is what a member is doing, as srvr reports it.
type Role int

const (
	// Looking: the member knows no leader and serves no client.
	Looking Role = iota
	// Leading: this member is the raft leader.
	Leading
	// Following: a voter that follows a known leader.
	Following
	// Observing: a learner that follows a known leader.
	Observing
	// Standalone: a member alone (no server.N lines); always serving.
	Standalone
)

// Mode returns the role as ZooKeeper's srvr "Mode:" line spells it.
func (r Role) Mode() string {
	switch r {
	case Leading:
		return "leader"
	case Following:
		return "follower"
	case Observing:
		return "observer"
	case Standalone:
		return "standalone"
	}
	return "looking"
}

// State returns the role as ZooKeeper's zk_server_state and
// zk_peer_state spell it (peer state in upper case: LEADING, ...).
func (r Role) State() string {
	switch r {
	case Leading:
		return "LEADING"
	case Following:
		return "FOLLOWING"
	case Observing:
		return "OBSERVING"
	case Standalone:
		return "STANDALONE"
	}
	return "LOOKING"
}

// Serving reports whether a member in this role serves clients.
func (r Role) Serving() bool { return r != Looking }
