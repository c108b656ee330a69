package server

import (
	"net"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// rawClient speaks the protocol by hand, for ops go-zookeeper lacks.
type rawClient struct {
	t      *testing.T
	nc     net.Conn
	xid    int32
	events []notification
}

// notification is a watch event as a rawClient received it, with the
// zxid of its reply header.
type notification struct {
	Zxid int64
	wire.WatcherEvent
}

func newRawClient(t *testing.T, srv *Server) *rawClient {
	return &rawClient{t: t, nc: rawSession(t, srv)}
}

// call sends one request and returns the reply header and body, keeping
// notifications that arrive first in c.events.
func (c *rawClient) call(op wire.OpCode, req wire.Record) (wire.ReplyHeader, *wire.Decoder) {
	c.t.Helper()
	c.xid++
	xid := c.xid
	if op == wire.OpPing {
		xid = wire.XidPing
	}
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: xid, Type: op}, req)); err != nil {
		c.t.Fatal(err)
	}
	for {
		body, err := wire.ReadFrame(c.nc, wire.DefaultMaxBuffer, nil)
		if err != nil {
			c.t.Fatalf("op %d: %v", op, err)
		}
		d := wire.NewDecoder(body, 0)
		var h wire.ReplyHeader
		h.Decode(d)
		if h.Xid == wire.XidNotification {
			var ev wire.WatcherEvent
			ev.Decode(d)
			c.events = append(c.events, notification{Zxid: h.Zxid, WatcherEvent: ev})
			continue
		}
		if h.Xid != xid {
			c.t.Fatalf("reply xid %d, want %d", h.Xid, xid)
		}
		return h, d
	}
}

// do calls op and decodes the body into resp when the reply is OK,
// returning the error code.
func (c *rawClient) do(op wire.OpCode, req, resp wire.Record) wire.Code {
	c.t.Helper()
	h, d := c.call(op, req)
	if h.Err == wire.CodeOK && resp != nil {
		resp.Decode(d)
		if d.Err() != nil || d.Remaining() != 0 {
			c.t.Fatalf("op %d: body decode %v, %d bytes left", op, d.Err(), d.Remaining())
		}
	}
	if h.Err != wire.CodeOK && d.Remaining() != 0 && op != wire.OpSASL {
		c.t.Fatalf("op %d: error reply carries a %d-byte body", op, d.Remaining())
	}
	return h.Err
}

func (c *rawClient) takeEvents() []notification {
	ev := c.events
	c.events = nil
	return ev
}

func TestEveryOpcode(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.ExtendedTypesEnabled = true })
	c := newRawClient(t, srv)
	open := wire.OpenACLUnsafe

	var c2 wire.Create2Response
	if code := c.do(wire.OpCreate2, &wire.CreateRequest{Path: "/t", Data: []byte("v"), ACL: open}, &c2); code != 0 {
		t.Fatalf("create2: %v", code)
	}
	if c2.Path != "/t" || c2.Stat.DataLength != 1 || c2.Stat.Czxid == 0 {
		t.Fatalf("create2 = %+v", c2)
	}
	var cr wire.CreateResponse
	if code := c.do(wire.OpCreate, &wire.CreateRequest{Path: "/t/s-", ACL: open, Flags: int32(wire.ModeEphemeralSequential)}, &cr); code != 0 || cr.Path != "/t/s-0000000000" {
		t.Fatalf("create seq = %+v %v", cr, code)
	}
	if code := c.do(wire.OpCreateContainer, &wire.CreateRequest{Path: "/box", ACL: open, Flags: 4}, &c2); code != 0 || c2.Stat.EphemeralOwner != 0 {
		t.Fatalf("createContainer = %+v %v", c2, code)
	}
	if code := c.do(wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/ttl", ACL: open, Flags: 5, TTL: 1000}, &c2); code != 0 {
		t.Fatalf("createTTL: %v", code)
	}
	if code := c.do(wire.OpDeleteContainer, &wire.DeleteContainerRequest{Path: "/box"}, nil); code != 0 {
		t.Fatalf("deleteContainer: %v", code)
	}

	var ex wire.ExistsResponse
	if code := c.do(wire.OpExists, &wire.ExistsRequest{Path: "/t"}, &ex); code != 0 || ex.Stat.NumChildren != 1 {
		t.Fatalf("exists = %+v %v", ex, code)
	}
	if code := c.do(wire.OpExists, &wire.ExistsRequest{Path: "/nope"}, nil); code != wire.ErrNoNode {
		t.Fatalf("exists missing: %v", code)
	}
	var gd wire.GetDataResponse
	if code := c.do(wire.OpGetData, &wire.GetDataRequest{Path: "/t"}, &gd); code != 0 || string(gd.Data) != "v" {
		t.Fatalf("getData = %+v %v", gd, code)
	}
	var sd wire.SetDataResponse
	if code := c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/t", Data: []byte("w"), Version: 0}, &sd); code != 0 || sd.Stat.Version != 1 {
		t.Fatalf("setData = %+v %v", sd, code)
	}
	var sa wire.SetACLResponse
	if code := c.do(wire.OpSetACL, &wire.SetACLRequest{Path: "/t", ACL: open, Version: 0}, &sa); code != 0 || sa.Stat.Aversion != 1 || sa.Stat.Version != 1 {
		t.Fatalf("setACL = %+v %v", sa, code)
	}
	if code := c.do(wire.OpSetACL, &wire.SetACLRequest{Path: "/t", ACL: open, Version: 0}, nil); code != wire.ErrBadVersion {
		t.Fatalf("setACL stale aversion: %v", code)
	}
	var ga wire.GetACLResponse
	if code := c.do(wire.OpGetACL, &wire.GetACLRequest{Path: "/t"}, &ga); code != 0 || !reflect.DeepEqual(ga.ACL, open) {
		t.Fatalf("getACL = %+v %v", ga, code)
	}
	var gc wire.GetChildrenResponse
	if code := c.do(wire.OpGetChildren, &wire.GetChildrenRequest{Path: "/t"}, &gc); code != 0 || !reflect.DeepEqual(gc.Children, []string{"s-0000000000"}) {
		t.Fatalf("getChildren = %+v %v", gc, code)
	}
	var gc2 wire.GetChildren2Response
	if code := c.do(wire.OpGetChildren2, &wire.GetChildren2Request{Path: "/"}, &gc2); code != 0 || gc2.Stat.NumChildren != int32(len(gc2.Children)) {
		t.Fatalf("getChildren2 = %+v %v", gc2, code)
	}
	var all wire.GetAllChildrenNumberResponse
	if code := c.do(wire.OpGetAllChildrenNumber, &wire.GetAllChildrenNumberRequest{Path: "/"}, &all); code != 0 || all.TotalNumber != 6 {
		// /zookeeper, /zookeeper/quota, /zookeeper/config, /t, /t/s-…, /ttl
		t.Fatalf("getAllChildrenNumber = %+v %v", all, code)
	}
	var eph wire.GetEphemeralsResponse
	if code := c.do(wire.OpGetEphemerals, &wire.GetEphemeralsRequest{PrefixPath: "/t"}, &eph); code != 0 || !reflect.DeepEqual(eph.Ephemerals, []string{"/t/s-0000000000"}) {
		t.Fatalf("getEphemerals = %+v %v", eph, code)
	}
	var sy wire.SyncResponse
	if code := c.do(wire.OpSync, &wire.SyncRequest{Path: "/t"}, &sy); code != 0 || sy.Path != "/t" {
		t.Fatalf("sync = %+v %v", sy, code)
	}
	var who wire.WhoAmIResponse
	c.do(wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("bob:secret")}, nil)
	if code := c.do(wire.OpWhoAmI, nil, &who); code != 0 ||
		!reflect.DeepEqual(who.ClientInfo, []wire.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "bob"}}) {
		t.Fatalf("whoAmI = %+v %v", who, code)
	}

	var mr wire.MultiResponse
	if code := c.do(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpGetData, Req: &wire.GetDataRequest{Path: "/t"}},
		{Type: wire.OpGetChildren, Req: &wire.GetChildrenRequest{Path: "/missing"}},
	}}, &mr); code != 0 || len(mr.Results) != 2 ||
		mr.Results[0].Type != wire.OpGetData || string(mr.Results[0].Data) != "w" ||
		mr.Results[1].Type != wire.OpError || mr.Results[1].Err != wire.ErrNoNode {
		t.Fatalf("multiRead = %+v %v", mr, code)
	}
	if code := c.do(wire.OpMulti, &wire.MultiRequest{}, &mr); code != 0 || len(mr.Results) != 0 {
		t.Fatalf("empty multi = %+v %v", mr, code)
	}
	var rc wire.GetDataResponse
	if code := c.do(wire.OpReconfig, &wire.ReconfigRequest{CurConfigID: -1}, &rc); code != wire.ErrReconfigDisabled {
		t.Fatalf("reconfig: %v", code)
	}

	// Watches: addWatch, checkWatches, removeWatches.
	var er wire.ErrorResponse
	if code := c.do(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/t", Mode: wire.AddWatchPersistentRecursive}, &er); code != 0 || er.Err != 0 {
		t.Fatalf("addWatch = %+v %v", er, code)
	}
	if code := c.do(wire.OpCheckWatches, &wire.CheckWatchesRequest{Path: "/t", Type: wire.WatcherPersistentRecursive}, nil); code != 0 {
		t.Fatalf("checkWatches: %v", code)
	}
	if code := c.do(wire.OpCheckWatches, &wire.CheckWatchesRequest{Path: "/t", Type: wire.WatcherChildren}, nil); code != wire.ErrNoWatcher {
		t.Fatalf("checkWatches absent: %v", code)
	}
	if code := c.do(wire.OpCheckWatches, &wire.CheckWatchesRequest{Path: "/t", Type: 9}, nil); code != wire.ErrMarshallingError {
		t.Fatalf("checkWatches bad type: %v", code)
	}
	c.takeEvents()
	c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/t/s-0000000000", Data: []byte("x"), Version: -1}, nil)
	if ev := c.takeEvents(); len(ev) != 1 || ev[0].Type != wire.EventNodeDataChanged || ev[0].Path != "/t/s-0000000000" {
		t.Fatalf("recursive watch events = %+v", ev)
	}
	if code := c.do(wire.OpRemoveWatches, &wire.RemoveWatchesRequest{Path: "/t", Type: wire.WatcherAny}, nil); code != 0 {
		t.Fatalf("removeWatches: %v", code)
	}
	if code := c.do(wire.OpRemoveWatches, &wire.RemoveWatchesRequest{Path: "/t", Type: wire.WatcherAny}, nil); code != wire.ErrNoWatcher {
		t.Fatalf("removeWatches twice: %v", code)
	}
	c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/t/s-0000000000", Data: []byte("y"), Version: -1}, nil)
	if ev := c.takeEvents(); len(ev) != 0 {
		t.Fatalf("events after removeWatches: %+v", ev)
	}

	// Ping and delete; closeSession last.
	if h, _ := c.call(wire.OpPing, nil); h.Err != 0 {
		t.Fatalf("ping: %+v", h)
	}
	if code := c.do(wire.OpDelete, &wire.DeleteRequest{Path: "/t", Version: -1}, nil); code != wire.ErrNotEmpty {
		t.Fatalf("delete non-empty: %v", code)
	}
	if code := c.do(wire.OpCloseSession, nil, nil); code != 0 {
		t.Fatalf("closeSession: %v", code)
	}
	if _, err := wire.ReadFrame(c.nc, 0, nil); err == nil {
		t.Fatal("connection open after closeSession")
	}
	// The session's ephemeral went with it.
	other := newRawClient(t, srv)
	if code := other.do(wire.OpExists, &wire.ExistsRequest{Path: "/t/s-0000000000"}, nil); code != wire.ErrNoNode {
		t.Fatalf("ephemeral after closeSession: %v", code)
	}
}

func TestSetWatchesFiresMissedEvents(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := newRawClient(t, srv)
	open := wire.OpenACLUnsafe
	for _, p := range []string{"/same", "/changed", "/gone", "/kids"} {
		c.do(wire.OpCreate, &wire.CreateRequest{Path: p, ACL: open}, nil)
	}
	h, _ := c.call(wire.OpExists, &wire.ExistsRequest{Path: "/same"})
	seen := h.Zxid
	// Changes while "disconnected".
	c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/changed", Data: []byte("x"), Version: -1}, nil)
	c.do(wire.OpDelete, &wire.DeleteRequest{Path: "/gone", Version: -1}, nil)
	c.do(wire.OpCreate, &wire.CreateRequest{Path: "/kids/k", ACL: open}, nil)
	c.do(wire.OpCreate, &wire.CreateRequest{Path: "/born", ACL: open}, nil)

	r := newRawClient(t, srv)
	if code := r.do(wire.OpSetWatches2, &wire.SetWatches2{
		RelativeZxid:               seen,
		DataWatches:                []string{"/same", "/changed", "/gone"},
		ExistWatches:               []string{"/born", "/unborn"},
		ChildWatches:               []string{"/kids", "/same"},
		PersistentRecursiveWatches: []string{"/same"},
	}, nil); code != 0 {
		t.Fatalf("setWatches2: %v", code)
	}
	got := map[string]wire.EventType{}
	for _, ev := range r.takeEvents() {
		got[ev.Path+" "+eventName(ev.Type)] = ev.Type
	}
	want := []string{"/born created", "/changed data", "/gone deleted", "/kids children"}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("catch-up events = %v, want %v", keys, want)
	}
	// The unchanged ones are armed: a change now fires them.
	c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/same", Data: []byte("1"), Version: -1}, nil)
	c.do(wire.OpCreate, &wire.CreateRequest{Path: "/unborn", ACL: open}, nil)
	r.do(wire.OpSync, &wire.SyncRequest{Path: "/"}, &wire.SyncResponse{})
	var evs []string
	for _, ev := range r.takeEvents() {
		evs = append(evs, ev.Path+" "+eventName(ev.Type))
	}
	sort.Strings(evs)
	if !reflect.DeepEqual(evs, []string{"/same data", "/unborn created"}) {
		t.Fatalf("armed events = %v", evs)
	}
}

func eventName(t wire.EventType) string {
	switch t {
	case wire.EventNodeCreated:
		return "created"
	case wire.EventNodeDeleted:
		return "deleted"
	case wire.EventNodeDataChanged:
		return "data"
	case wire.EventNodeChildrenChanged:
		return "children"
	}
	return "other"
}

func TestEventsReachOnlyReaders(t *testing.T) {
	srv, _ := startServer(t, nil)
	owner := newRawClient(t, srv)
	stranger := newRawClient(t, srv)
	owner.do(wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("bob:secret")}, nil)
	owner.do(wire.OpCreate, &wire.CreateRequest{Path: "/secret", ACL: wire.CreatorAllACL}, nil)
	stranger.do(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/", Mode: wire.AddWatchPersistentRecursive}, &wire.ErrorResponse{})
	owner.do(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/", Mode: wire.AddWatchPersistentRecursive}, &wire.ErrorResponse{})
	owner.do(wire.OpSetData, &wire.SetDataRequest{Path: "/secret", Data: []byte("x"), Version: -1}, nil)
	owner.do(wire.OpCreate, &wire.CreateRequest{Path: "/public", ACL: wire.OpenACLUnsafe}, nil)
	stranger.do(wire.OpSync, &wire.SyncRequest{Path: "/"}, &wire.SyncResponse{})
	if ev := stranger.takeEvents(); len(ev) != 1 || ev[0].Path != "/public" {
		t.Fatalf("stranger saw %+v; want only /public", ev)
	}
	if ev := owner.takeEvents(); len(ev) != 2 {
		t.Fatalf("owner saw %+v; want /secret and /public", ev)
	}
}

func TestAuthFailureClosesConnection(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := newRawClient(t, srv)
	c.xid = 0
	c.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: wire.XidAuth, Type: wire.OpAuth},
		&wire.AuthPacket{Scheme: "kerberos-ish", Auth: []byte("x")}))
	body, err := wire.ReadFrame(c.nc, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h wire.ReplyHeader
	if err := wire.Unmarshal(body, &h, 0); err != nil || h.Xid != wire.XidAuth || h.Err != wire.ErrAuthFailed {
		t.Fatalf("auth reply = %+v %v", h, err)
	}
	if _, err := wire.ReadFrame(c.nc, 0, nil); err == nil {
		t.Fatal("connection open after failed auth")
	}
}
