package wire

// OpCode is a request type (ZooDefs.OpCode).
type OpCode int32

// The opcodes of the client protocol.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	OpError                OpCode = -1
)

// Reserved xids.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// Perm is an ACL permission bit set.
type Perm int32

// Permission bits.
const (
	PermRead   Perm = 1
	PermWrite  Perm = 2
	PermCreate Perm = 4
	PermDelete Perm = 8
	PermAdmin  Perm = 16
	PermAll    Perm = 31
)

// permLetters are the permissions in the order zkCli.sh prints them.
var permLetters = [...]struct {
	bit    Perm
	letter byte
}{{PermCreate, 'c'}, {PermDelete, 'd'}, {PermRead, 'r'}, {PermWrite, 'w'}, {PermAdmin, 'a'}}

// Letters renders p as zkCli.sh and ZooKeeper's logs do: the letters of
// its bits, a subset of "cdrwa" in that order ("" for none).
func (p Perm) Letters() string {
	b := make([]byte, 0, len(permLetters))
	for _, x := range permLetters {
		if p&x.bit != 0 {
			b = append(b, x.letter)
		}
	}
	return string(b)
}

// ID is an ACL identity: a scheme and an id within it (jute Id).
type ID struct {
	Scheme string
	ID     string
}

// ACL is one access-control entry (jute ACL).
type ACL struct {
	Perms Perm
	ID    ID
}

// Well-known identities and ACL lists (ZooDefs.Ids).
var (
	AnyoneID      = ID{Scheme: "world", ID: "anyone"}
	AuthID        = ID{Scheme: "auth", ID: ""}
	OpenACLUnsafe = []ACL{{Perms: PermAll, ID: AnyoneID}}
	CreatorAllACL = []ACL{{Perms: PermAll, ID: AuthID}}
	ReadACLUnsafe = []ACL{{Perms: PermRead, ID: AnyoneID}}
)

// Encode implements Record.
func (id *ID) Encode(e *Encoder) { e.String(id.Scheme); e.String(id.ID) }

// Decode implements Record.
func (id *ID) Decode(d *Decoder) { id.Scheme = d.idString(); id.ID = d.idString() }

// Encode implements Record.
func (a *ACL) Encode(e *Encoder) { e.Int32(int32(a.Perms)); a.ID.Encode(e) }

// Decode implements Record.
func (a *ACL) Decode(d *Decoder) { a.Perms = Perm(d.Int32()); a.ID.Decode(d) }

// EncodeACLs encodes a vector<ACL>; nil encodes as count -1.
func EncodeACLs(e *Encoder, acl []ACL) {
	if acl == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(e)
	}
}

// DecodeACLs decodes a vector<ACL>; a null vector decodes as nil.
func DecodeACLs(d *Decoder) []ACL {
	n := d.VectorLen(12)
	if n < 0 {
		return nil
	}
	out := make([]ACL, n)
	for i := range out {
		out[i].Decode(d)
	}
	return out
}

// Stat is a znode's metadata as clients see it (jute Stat, 68 bytes).
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// Encode implements Record.
func (s *Stat) Encode(e *Encoder) {
	e.Int64(s.Czxid)
	e.Int64(s.Mzxid)
	e.Int64(s.Ctime)
	e.Int64(s.Mtime)
	e.Int32(s.Version)
	e.Int32(s.Cversion)
	e.Int32(s.Aversion)
	e.Int64(s.EphemeralOwner)
	e.Int32(s.DataLength)
	e.Int32(s.NumChildren)
	e.Int64(s.Pzxid)
}

// Decode implements Record.
func (s *Stat) Decode(d *Decoder) {
	s.Czxid = d.Int64()
	s.Mzxid = d.Int64()
	s.Ctime = d.Int64()
	s.Mtime = d.Int64()
	s.Version = d.Int32()
	s.Cversion = d.Int32()
	s.Aversion = d.Int32()
	s.EphemeralOwner = d.Int64()
	s.DataLength = d.Int32()
	s.NumChildren = d.Int32()
	s.Pzxid = d.Int64()
}

// EventType is a watch event type (Watcher.Event.EventType).
type EventType int32

// Event types; the server sends only 1–4.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

// State is a keeper state (Watcher.Event.KeeperState).
type State int32

// Keeper states; the server sends only StateSyncConnected in events.
const (
	StateUnknown           State = -1
	StateDisconnected      State = 0
	StateSyncConnected     State = 3
	StateAuthFailed        State = 4
	StateConnectedReadOnly State = 5
	StateSaslAuthenticated State = 6
	StateExpired           State = -112
	StateClosed            State = 7
)

// WatcherType selects watches in checkWatches/removeWatches.
type WatcherType int32

// Watcher types.
const (
	WatcherChildren            WatcherType = 1
	WatcherData                WatcherType = 2
	WatcherAny                 WatcherType = 3
	WatcherPersistent          WatcherType = 4
	WatcherPersistentRecursive WatcherType = 5
)

// AddWatchMode is the mode of an addWatch request.
type AddWatchMode int32

// addWatch modes.
const (
	AddWatchPersistent          AddWatchMode = 0
	AddWatchPersistentRecursive AddWatchMode = 1
)

// CreateMode is the flags field of a create request (CreateMode).
type CreateMode int32

// Create modes.
const (
	ModePersistent                  CreateMode = 0
	ModeEphemeral                   CreateMode = 1
	ModePersistentSequential        CreateMode = 2
	ModeEphemeralSequential         CreateMode = 3
	ModeContainer                   CreateMode = 4
	ModePersistentWithTTL           CreateMode = 5
	ModePersistentSequentialWithTTL CreateMode = 6
)

// Valid reports whether m is one of the seven defined modes.
func (m CreateMode) Valid() bool { return m >= ModePersistent && m <= ModePersistentSequentialWithTTL }

// Ephemeral reports whether nodes of mode m belong to a session.
func (m CreateMode) Ephemeral() bool { return m == ModeEphemeral || m == ModeEphemeralSequential }

// Sequential reports whether mode m appends a sequence number.
func (m CreateMode) Sequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// TTL reports whether mode m is a TTL mode.
func (m CreateMode) TTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

// Container reports whether mode m is the container mode.
func (m CreateMode) Container() bool { return m == ModeContainer }
