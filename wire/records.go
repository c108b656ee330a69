package wire

// This file holds every record of the client protocol other than multi
// (multi.go): the handshake, the headers, and one request and response
// record per opcode. Field order is wire order; see reference §1 and §2.

// ConnectRequest is the first frame a client sends, with no RequestHeader.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32 // requested session timeout, ms
	SessionID       int64 // 0 asks for a new session
	Passwd          []byte
	ReadOnly        bool
	// HasReadOnly reports whether the readOnly byte is present. Old
	// clients (and go-zookeeper) end the frame after Passwd; the server
	// must then answer without the byte too.
	HasReadOnly bool
}

// Encode implements Record. The readOnly byte is written only if
// HasReadOnly is set.
func (r *ConnectRequest) Encode(e *Encoder) {
	e.Int32(r.ProtocolVersion)
	e.Int64(r.LastZxidSeen)
	e.Int32(r.TimeOut)
	e.Int64(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// Decode implements Record. A frame that ends after Passwd decodes with
// HasReadOnly and ReadOnly false.
func (r *ConnectRequest) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.LastZxidSeen = d.Int64()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.HasReadOnly = false, false
	if d.Err() == nil && d.Remaining() > 0 {
		r.ReadOnly = d.Bool()
		r.HasReadOnly = true
	}
}

// ConnectResponse is the server's answer to a ConnectRequest, with no
// ReplyHeader. TimeOut 0 tells the client its session is invalid.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32 // negotiated session timeout, ms
	SessionID       int64
	Passwd          []byte // 16 bytes: the C client reads exactly that many
	ReadOnly        bool
	// HasReadOnly reports whether the readOnly byte is present; set it
	// to the request's HasReadOnly when answering.
	HasReadOnly bool
}

// Encode implements Record. The readOnly byte is written only if
// HasReadOnly is set.
func (r *ConnectResponse) Encode(e *Encoder) {
	e.Int32(r.ProtocolVersion)
	e.Int32(r.TimeOut)
	e.Int64(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// Decode implements Record. A frame that ends after Passwd decodes with
// HasReadOnly and ReadOnly false.
func (r *ConnectResponse) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.HasReadOnly = false, false
	if d.Err() == nil && d.Remaining() > 0 {
		r.ReadOnly = d.Bool()
		r.HasReadOnly = true
	}
}

// RequestHeader starts every client frame after the handshake.
type RequestHeader struct {
	Xid  int32
	Type OpCode
}

// Encode implements Record.
func (h *RequestHeader) Encode(e *Encoder) { e.Int32(h.Xid); e.Int32(int32(h.Type)) }

// Decode implements Record.
func (h *RequestHeader) Decode(d *Decoder) { h.Xid = d.Int32(); h.Type = OpCode(d.Int32()) }

// ReplyHeader starts every server frame after the handshake. A response
// body follows only when Err is CodeOK (multi and SASL aside).
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  Code
}

// Encode implements Record.
func (h *ReplyHeader) Encode(e *Encoder) { e.Int32(h.Xid); e.Int64(h.Zxid); e.Int32(int32(h.Err)) }

// Decode implements Record.
func (h *ReplyHeader) Decode(d *Decoder) {
	h.Xid = d.Int32()
	h.Zxid = d.Int64()
	h.Err = Code(d.Int32())
}

// CreateRequest is the body of create, create2 and createContainer.
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32 // a CreateMode
}

// Encode implements Record.
func (r *CreateRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	EncodeACLs(e, r.ACL)
	e.Int32(r.Flags)
}

// Decode implements Record.
func (r *CreateRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = DecodeACLs(d)
	r.Flags = d.Int32()
}

// CreateTTLRequest is the body of createTTL.
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32 // a CreateMode
	TTL   int64 // ms
}

// Encode implements Record.
func (r *CreateTTLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	EncodeACLs(e, r.ACL)
	e.Int32(r.Flags)
	e.Int64(r.TTL)
}

// Decode implements Record.
func (r *CreateTTLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = DecodeACLs(d)
	r.Flags = d.Int32()
	r.TTL = d.Int64()
}

// CreateResponse answers create.
type CreateResponse struct {
	Path string // the created path, with any sequence suffix
}

// Encode implements Record.
func (r *CreateResponse) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *CreateResponse) Decode(d *Decoder) { r.Path = d.String() }

// Create2Response answers create2, createContainer and createTTL.
type Create2Response struct {
	Path string
	Stat Stat
}

// Encode implements Record.
func (r *Create2Response) Encode(e *Encoder) { e.String(r.Path); r.Stat.Encode(e) }

// Decode implements Record.
func (r *Create2Response) Decode(d *Decoder) { r.Path = d.String(); r.Stat.Decode(d) }

// DeleteRequest is the body of delete; Version -1 matches any version.
type DeleteRequest struct {
	Path    string
	Version int32
}

// Encode implements Record.
func (r *DeleteRequest) Encode(e *Encoder) { e.String(r.Path); e.Int32(r.Version) }

// Decode implements Record.
func (r *DeleteRequest) Decode(d *Decoder) { r.Path = d.String(); r.Version = d.Int32() }

// DeleteContainerRequest is the body of deleteContainer.
type DeleteContainerRequest struct {
	Path string
}

// Encode implements Record.
func (r *DeleteContainerRequest) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *DeleteContainerRequest) Decode(d *Decoder) { r.Path = d.String() }

// ExistsRequest is the body of exists.
type ExistsRequest struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (r *ExistsRequest) Encode(e *Encoder) { e.String(r.Path); e.Bool(r.Watch) }

// Decode implements Record.
func (r *ExistsRequest) Decode(d *Decoder) { r.Path = d.String(); r.Watch = d.Bool() }

// ExistsResponse answers exists.
type ExistsResponse struct {
	Stat Stat
}

// Encode implements Record.
func (r *ExistsResponse) Encode(e *Encoder) { r.Stat.Encode(e) }

// Decode implements Record.
func (r *ExistsResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// GetDataRequest is the body of getData.
type GetDataRequest struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (r *GetDataRequest) Encode(e *Encoder) { e.String(r.Path); e.Bool(r.Watch) }

// Decode implements Record.
func (r *GetDataRequest) Decode(d *Decoder) { r.Path = d.String(); r.Watch = d.Bool() }

// GetDataResponse answers getData and reconfig. Nil Data is the null
// buffer (length -1), as for nodes created with null data.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Encode implements Record.
func (r *GetDataResponse) Encode(e *Encoder) { e.Buffer(r.Data); r.Stat.Encode(e) }

// Decode implements Record.
func (r *GetDataResponse) Decode(d *Decoder) { r.Data = d.Buffer(); r.Stat.Decode(d) }

// SetDataRequest is the body of setData; Version -1 matches any version.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// Encode implements Record.
func (r *SetDataRequest) Encode(e *Encoder) { e.String(r.Path); e.Buffer(r.Data); e.Int32(r.Version) }

// Decode implements Record.
func (r *SetDataRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int32()
}

// SetDataResponse answers setData.
type SetDataResponse struct {
	Stat Stat
}

// Encode implements Record.
func (r *SetDataResponse) Encode(e *Encoder) { r.Stat.Encode(e) }

// Decode implements Record.
func (r *SetDataResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// GetACLRequest is the body of getACL.
type GetACLRequest struct {
	Path string
}

// Encode implements Record.
func (r *GetACLRequest) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *GetACLRequest) Decode(d *Decoder) { r.Path = d.String() }

// GetACLResponse answers getACL.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Encode implements Record.
func (r *GetACLResponse) Encode(e *Encoder) { EncodeACLs(e, r.ACL); r.Stat.Encode(e) }

// Decode implements Record.
func (r *GetACLResponse) Decode(d *Decoder) { r.ACL = DecodeACLs(d); r.Stat.Decode(d) }

// SetACLRequest is the body of setACL; Version is compared with aversion.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// Encode implements Record.
func (r *SetACLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	EncodeACLs(e, r.ACL)
	e.Int32(r.Version)
}

// Decode implements Record.
func (r *SetACLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.ACL = DecodeACLs(d)
	r.Version = d.Int32()
}

// SetACLResponse answers setACL.
type SetACLResponse struct {
	Stat Stat
}

// Encode implements Record.
func (r *SetACLResponse) Encode(e *Encoder) { r.Stat.Encode(e) }

// Decode implements Record.
func (r *SetACLResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// GetChildrenRequest is the body of getChildren.
type GetChildrenRequest struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (r *GetChildrenRequest) Encode(e *Encoder) { e.String(r.Path); e.Bool(r.Watch) }

// Decode implements Record.
func (r *GetChildrenRequest) Decode(d *Decoder) { r.Path = d.String(); r.Watch = d.Bool() }

// GetChildrenResponse answers getChildren: child names, not paths.
type GetChildrenResponse struct {
	Children []string
}

// Encode implements Record.
func (r *GetChildrenResponse) Encode(e *Encoder) { e.Strings(r.Children) }

// Decode implements Record.
func (r *GetChildrenResponse) Decode(d *Decoder) { r.Children = d.Strings() }

// GetChildren2Request is the body of getChildren2.
type GetChildren2Request struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (r *GetChildren2Request) Encode(e *Encoder) { e.String(r.Path); e.Bool(r.Watch) }

// Decode implements Record.
func (r *GetChildren2Request) Decode(d *Decoder) { r.Path = d.String(); r.Watch = d.Bool() }

// GetChildren2Response answers getChildren2.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Encode implements Record.
func (r *GetChildren2Response) Encode(e *Encoder) { e.Strings(r.Children); r.Stat.Encode(e) }

// Decode implements Record.
func (r *GetChildren2Response) Decode(d *Decoder) { r.Children = d.Strings(); r.Stat.Decode(d) }

// SyncRequest is the body of sync.
type SyncRequest struct {
	Path string
}

// Encode implements Record.
func (r *SyncRequest) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *SyncRequest) Decode(d *Decoder) { r.Path = d.String() }

// SyncResponse answers sync, echoing the path.
type SyncResponse struct {
	Path string
}

// Encode implements Record.
func (r *SyncResponse) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *SyncResponse) Decode(d *Decoder) { r.Path = d.String() }

// CheckVersionRequest is the body of check (meaningful only inside multi).
type CheckVersionRequest struct {
	Path    string
	Version int32
}

// Encode implements Record.
func (r *CheckVersionRequest) Encode(e *Encoder) { e.String(r.Path); e.Int32(r.Version) }

// Decode implements Record.
func (r *CheckVersionRequest) Decode(d *Decoder) { r.Path = d.String(); r.Version = d.Int32() }

// ReconfigRequest is the body of reconfig; the answer is a GetDataResponse
// carrying the new configuration.
//
// Each of the three strings may be null on the wire (length -1), which is
// not the same as empty: ZooKeeper treats a non-null NewMembers as a
// non-incremental reconfig (the whole new membership) and otherwise
// applies JoiningServers and LeavingServers, each skipped when null.
// ZooKeeperAdmin sends the lists it was not given as null. The Null
// fields mark null strings (their string is then ""); decoding sets them.
type ReconfigRequest struct {
	JoiningServers string // comma-separated server.N=... lines to add
	LeavingServers string // comma-separated ids to remove
	NewMembers     string // comma- or newline-separated new membership
	CurConfigID    int64  // configuration version to change; -1: any
	NullJoining    bool   // JoiningServers is null
	NullLeaving    bool   // LeavingServers is null
	NullMembers    bool   // NewMembers is null
}

// Encode implements Record.
func (r *ReconfigRequest) Encode(e *Encoder) {
	e.NullableString(r.JoiningServers, r.NullJoining)
	e.NullableString(r.LeavingServers, r.NullLeaving)
	e.NullableString(r.NewMembers, r.NullMembers)
	e.Int64(r.CurConfigID)
}

// Decode implements Record.
func (r *ReconfigRequest) Decode(d *Decoder) {
	r.JoiningServers, r.NullJoining = d.NullableString()
	r.LeavingServers, r.NullLeaving = d.NullableString()
	r.NewMembers, r.NullMembers = d.NullableString()
	r.CurConfigID = d.Int64()
}

// CheckWatchesRequest is the body of checkWatches.
type CheckWatchesRequest struct {
	Path string
	Type WatcherType
}

// Encode implements Record.
func (r *CheckWatchesRequest) Encode(e *Encoder) { e.String(r.Path); e.Int32(int32(r.Type)) }

// Decode implements Record.
func (r *CheckWatchesRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Type = WatcherType(d.Int32())
}

// RemoveWatchesRequest is the body of removeWatches.
type RemoveWatchesRequest struct {
	Path string
	Type WatcherType
}

// Encode implements Record.
func (r *RemoveWatchesRequest) Encode(e *Encoder) { e.String(r.Path); e.Int32(int32(r.Type)) }

// Decode implements Record.
func (r *RemoveWatchesRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Type = WatcherType(d.Int32())
}

// AuthPacket is the body of auth (xid XidAuth). Type is always 0.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Encode implements Record.
func (r *AuthPacket) Encode(e *Encoder) { e.Int32(r.Type); e.String(r.Scheme); e.Buffer(r.Auth) }

// Decode implements Record.
func (r *AuthPacket) Decode(d *Decoder) {
	r.Type = d.Int32()
	r.Scheme = d.String()
	r.Auth = d.Buffer()
}

// SetWatches is the body of setWatches (xid XidSetWatches), sent on
// reconnect to re-arm watches; RelativeZxid is the client's last zxid.
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

// Encode implements Record.
func (r *SetWatches) Encode(e *Encoder) {
	e.Int64(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
}

// Decode implements Record.
func (r *SetWatches) Decode(d *Decoder) {
	r.RelativeZxid = d.Int64()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
}

// SetWatches2 is the body of setWatches2: SetWatches plus persistent and
// persistent-recursive watches.
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// Encode implements Record.
func (r *SetWatches2) Encode(e *Encoder) {
	e.Int64(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
	e.Strings(r.PersistentWatches)
	e.Strings(r.PersistentRecursiveWatches)
}

// Decode implements Record.
func (r *SetWatches2) Decode(d *Decoder) {
	r.RelativeZxid = d.Int64()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	r.PersistentWatches = d.Strings()
	r.PersistentRecursiveWatches = d.Strings()
}

// GetSASLRequest is the body of sasl.
type GetSASLRequest struct {
	Token []byte
}

// Encode implements Record.
func (r *GetSASLRequest) Encode(e *Encoder) { e.Buffer(r.Token) }

// Decode implements Record.
func (r *GetSASLRequest) Decode(d *Decoder) { r.Token = d.Buffer() }

// SetSASLResponse answers sasl, also on failure (nil Token).
type SetSASLResponse struct {
	Token []byte
}

// Encode implements Record.
func (r *SetSASLResponse) Encode(e *Encoder) { e.Buffer(r.Token) }

// Decode implements Record.
func (r *SetSASLResponse) Decode(d *Decoder) { r.Token = d.Buffer() }

// GetEphemeralsRequest is the body of getEphemerals; PrefixPath is a raw
// string prefix.
type GetEphemeralsRequest struct {
	PrefixPath string
}

// Encode implements Record.
func (r *GetEphemeralsRequest) Encode(e *Encoder) { e.String(r.PrefixPath) }

// Decode implements Record.
func (r *GetEphemeralsRequest) Decode(d *Decoder) { r.PrefixPath = d.String() }

// GetEphemeralsResponse answers getEphemerals with full paths.
type GetEphemeralsResponse struct {
	Ephemerals []string
}

// Encode implements Record.
func (r *GetEphemeralsResponse) Encode(e *Encoder) { e.Strings(r.Ephemerals) }

// Decode implements Record.
func (r *GetEphemeralsResponse) Decode(d *Decoder) { r.Ephemerals = d.Strings() }

// GetAllChildrenNumberRequest is the body of getAllChildrenNumber.
type GetAllChildrenNumberRequest struct {
	Path string
}

// Encode implements Record.
func (r *GetAllChildrenNumberRequest) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *GetAllChildrenNumberRequest) Decode(d *Decoder) { r.Path = d.String() }

// GetAllChildrenNumberResponse answers getAllChildrenNumber with the
// number of descendants.
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

// Encode implements Record.
func (r *GetAllChildrenNumberResponse) Encode(e *Encoder) { e.Int32(r.TotalNumber) }

// Decode implements Record.
func (r *GetAllChildrenNumberResponse) Decode(d *Decoder) { r.TotalNumber = d.Int32() }

// AddWatchRequest is the body of addWatch; the answer is an ErrorResponse
// with Err CodeOK.
type AddWatchRequest struct {
	Path string
	Mode AddWatchMode
}

// Encode implements Record.
func (r *AddWatchRequest) Encode(e *Encoder) { e.String(r.Path); e.Int32(int32(r.Mode)) }

// Decode implements Record.
func (r *AddWatchRequest) Decode(d *Decoder) { r.Path = d.String(); r.Mode = AddWatchMode(d.Int32()) }

// ErrorResponse is a bare error code: the body of an addWatch reply and of
// a failed op inside a multi response.
type ErrorResponse struct {
	Err Code
}

// Encode implements Record.
func (r *ErrorResponse) Encode(e *Encoder) { e.Int32(int32(r.Err)) }

// Decode implements Record.
func (r *ErrorResponse) Decode(d *Decoder) { r.Err = Code(d.Int32()) }

// ClientInfo is one authenticated identity of a connection.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// Encode implements Record.
func (c *ClientInfo) Encode(e *Encoder) { e.String(c.AuthScheme); e.String(c.User) }

// Decode implements Record.
func (c *ClientInfo) Decode(d *Decoder) { c.AuthScheme = d.String(); c.User = d.String() }

// WhoAmIResponse answers whoAmI (a header-only request).
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Encode implements Record. A nil slice is the null vector.
func (r *WhoAmIResponse) Encode(e *Encoder) {
	if r.ClientInfo == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(r.ClientInfo)))
	for i := range r.ClientInfo {
		r.ClientInfo[i].Encode(e)
	}
}

// Decode implements Record. The null vector decodes as nil.
func (r *WhoAmIResponse) Decode(d *Decoder) {
	n := d.VectorLen(8) // two empty strings
	if n < 0 {
		r.ClientInfo = nil
		return
	}
	r.ClientInfo = make([]ClientInfo, n)
	for i := range r.ClientInfo {
		r.ClientInfo[i].Decode(d)
	}
}

// WatcherEvent is the body of a notification (xid XidNotification).
type WatcherEvent struct {
	Type  EventType
	State State
	Path  string
}

// Encode implements Record.
func (w *WatcherEvent) Encode(e *Encoder) {
	e.Int32(int32(w.Type))
	e.Int32(int32(w.State))
	e.String(w.Path)
}

// Decode implements Record.
func (w *WatcherEvent) Decode(d *Decoder) {
	w.Type = EventType(d.Int32())
	w.State = State(d.Int32())
	w.Path = d.String()
}

// RequestFor returns a fresh, empty request record for op, ready to
// Decode the body that follows a RequestHeader of that type. It returns
// nil, false for ops whose request is the header alone (ping,
// closeSession, whoAmI) and for ops that are not client requests at all
// (notification, createSession, error, unknown numbers); the server
// decides which of those it answers and how.
func RequestFor(op OpCode) (Record, bool) {
	var r Record
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		r = &CreateRequest{}
	case OpCreateTTL:
		r = &CreateTTLRequest{}
	case OpDelete:
		r = &DeleteRequest{}
	case OpDeleteContainer:
		r = &DeleteContainerRequest{}
	case OpExists:
		r = &ExistsRequest{}
	case OpGetData:
		r = &GetDataRequest{}
	case OpSetData:
		r = &SetDataRequest{}
	case OpGetACL:
		r = &GetACLRequest{}
	case OpSetACL:
		r = &SetACLRequest{}
	case OpGetChildren:
		r = &GetChildrenRequest{}
	case OpGetChildren2:
		r = &GetChildren2Request{}
	case OpSync:
		r = &SyncRequest{}
	case OpCheck:
		r = &CheckVersionRequest{}
	case OpMulti, OpMultiRead:
		r = &MultiRequest{}
	case OpReconfig:
		r = &ReconfigRequest{}
	case OpCheckWatches:
		r = &CheckWatchesRequest{}
	case OpRemoveWatches:
		r = &RemoveWatchesRequest{}
	case OpAuth:
		r = &AuthPacket{}
	case OpSetWatches:
		r = &SetWatches{}
	case OpSetWatches2:
		r = &SetWatches2{}
	case OpSASL:
		r = &GetSASLRequest{}
	case OpGetEphemerals:
		r = &GetEphemeralsRequest{}
	case OpGetAllChildrenNumber:
		r = &GetAllChildrenNumberRequest{}
	case OpAddWatch:
		r = &AddWatchRequest{}
	default:
		return nil, false
	}
	return r, true
}
