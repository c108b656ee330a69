package client

import (
	"errors"
	"fmt"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/wire"
)

// The errors operations return. Server error codes are the wire codes,
// re-exported so callers need one import: errors.Is(err, client.ErrNoNode).
var (
	ErrNoNode                  = wire.ErrNoNode
	ErrNodeExists              = wire.ErrNodeExists
	ErrBadVersion              = wire.ErrBadVersion
	ErrNotEmpty                = wire.ErrNotEmpty
	ErrNoAuth                  = wire.ErrNoAuth
	ErrInvalidACL              = wire.ErrInvalidACL
	ErrNoChildrenForEphemerals = wire.ErrNoChildrenForEphemerals
	ErrBadArguments            = wire.ErrBadArguments
	ErrUnimplemented           = wire.ErrUnimplemented
	ErrNoWatcher               = wire.ErrNoWatcher
	ErrAuthFailed              = wire.ErrAuthFailed
	// ErrReconfigDisabled: the server does not allow reconfig
	// (reconfigEnabled=false).
	ErrReconfigDisabled = wire.ErrReconfigDisabled
	// ErrReconfigInProgress: another reconfig has not finished; retry.
	ErrReconfigInProgress = wire.ErrReconfigInProgress
	// ErrNewConfigNoQuorum: no quorum of the proposed configuration is
	// connected to the leader and in sync; start the new servers first.
	ErrNewConfigNoQuorum = wire.ErrNewConfigNoQuorum
	// ErrSessionExpired: the session is gone (expired on the server, or
	// the client was cut off for longer than the session timeout). The
	// Conn is dead; make a new one.
	ErrSessionExpired = wire.ErrSessionExpired
	// ErrConnectionLoss: the request was in flight when the connection
	// dropped. It may or may not have been applied; the Conn reconnects
	// by itself and later requests work.
	ErrConnectionLoss = wire.ErrConnectionLoss
	// ErrClosed: Close was called.
	ErrClosed = errors.New("client: connection closed")
	// ErrProtocol wraps a reply that broke the protocol (out-of-order
	// xid, undecodable body). The connection is dropped; requests in
	// flight get ErrConnectionLoss.
	ErrProtocol = errors.New("client: protocol error")
)

// Stat is a znode's metadata.
type Stat = wire.Stat

// ACL is one access-control entry.
type ACL = wire.ACL

// ID is an ACL identity (scheme and id).
type ID = wire.ID

// CreateMode selects persistent/ephemeral/sequential/container/TTL nodes.
type CreateMode = wire.CreateMode

// The create modes.
const (
	Persistent                  = wire.ModePersistent
	Ephemeral                   = wire.ModeEphemeral
	PersistentSequential        = wire.ModePersistentSequential
	EphemeralSequential         = wire.ModeEphemeralSequential
	Container                   = wire.ModeContainer
	PersistentWithTTL           = wire.ModePersistentWithTTL
	PersistentSequentialWithTTL = wire.ModePersistentSequentialWithTTL
)

// Well-known ACL lists: everyone may do everything (OpenACL), the
// authenticated creator may do everything (CreatorAllACL), everyone may
// read (ReadACL).
var (
	OpenACL       = wire.OpenACLUnsafe
	CreatorAllACL = wire.CreatorAllACL
	ReadACL       = wire.ReadACLUnsafe
)

// DigestACL returns an ACL entry granting perms to the digest identity
// user:password, as id "user:base64(sha1(user:password))". The matching
// credentials are AddAuth(ctx, "digest", []byte("user:password")).
func DigestACL(perms wire.Perm, user, password string) ACL {
	return ACL{Perms: perms, ID: ID{Scheme: "digest", ID: auth.DigestID(user + ":" + password)}}
}

// State is the client's view of its session.
type State int

// The session states. Connected, Disconnected and Connecting come and go;
// Expired, AuthFailed and Closed are terminal.
const (
	// StateConnecting: no session yet (Connect has not returned).
	StateConnecting State = iota
	// StateConnected: a session is established on a live connection.
	StateConnected
	// StateDisconnected: the connection dropped; the client is
	// reconnecting and the session may still be alive. Requests wait.
	StateDisconnected
	// StateExpired: the session is gone; the Conn is dead.
	StateExpired
	// StateAuthFailed: the server rejected credentials; the Conn is dead.
	StateAuthFailed
	// StateClosed: Close was called.
	StateClosed
)

var stateNames = [...]string{"Connecting", "Connected", "Disconnected", "Expired", "AuthFailed", "Closed"}

// String returns the state's name.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// SessionEvent reports a state change. A StateConnected event after a
// StateDisconnected one with the same SessionID is a reconnect that kept
// the session (and its ephemerals and watches).
type SessionEvent struct {
	State     State
	SessionID int64
	Server    string // host:port of the server, for StateConnected
}

// Event is a watch event. Path is relative to the chroot. Err is non-nil
// (ErrSessionExpired, ErrClosed, ErrAuthFailed) when the watch ends
// without a node event; Type is then wire.EventNone.
type Event struct {
	Type wire.EventType
	Path string
	// Zxid is the zxid of the change that fired the event, from the
	// notification's header (Warden, ZooKeeper 3.9+). It is NoZxid when
	// the server does not send it (ZooKeeper before 3.9), for the catch-up
	// events a server sends when watches are re-armed after a reconnect,
	// and for the events the client makes itself (Err set, watch removed).
	Zxid int64
	Err  error
}

// NoZxid is Event.Zxid when no known transaction fired the event.
const NoZxid int64 = -1
