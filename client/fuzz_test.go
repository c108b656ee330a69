package client

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// fuzzMaxBuffer is the reply limit of the fuzzed client: small, so that
// length checks are reached.
const fuzzMaxBuffer = 1 << 12

// fuzzCall is one request of FuzzReplies, issued in this order so that
// call i has xid i+1 (auth, which has its own xid, comes last).
type fuzzCall struct {
	name string
	run  func(ctx context.Context, c *Conn) error
}

var fuzzCalls = []fuzzCall{
	{"GetW", func(ctx context.Context, c *Conn) error { _, _, _, err := c.GetW(ctx, "/a"); return err }},
	{"ChildrenW", func(ctx context.Context, c *Conn) error { _, _, _, err := c.ChildrenW(ctx, "/"); return err }},
	{"ExistsW", func(ctx context.Context, c *Conn) error { _, _, _, err := c.ExistsW(ctx, "/b"); return err }},
	{"Multi", func(ctx context.Context, c *Conn) error {
		_, err := c.Multi(ctx, CreateOp("/c", nil, Persistent, OpenACL), SetDataOp("/a", []byte("x"), -1), CheckOp("/b", 1))
		return err
	}},
	{"MultiRead", func(ctx context.Context, c *Conn) error {
		_, err := c.MultiRead(ctx, GetDataReadOp("/a"), ChildrenReadOp("/"))
		return err
	}},
	{"Create", func(ctx context.Context, c *Conn) error {
		_, err := c.Create(ctx, "/d-", nil, EphemeralSequential, OpenACL)
		return err
	}},
	{"AddWatch", func(ctx context.Context, c *Conn) error { _, err := c.AddWatch(ctx, "/", true); return err }},
	{"GetACL", func(ctx context.Context, c *Conn) error { _, _, err := c.GetACL(ctx, "/a"); return err }},
	{"WhoAmI", func(ctx context.Context, c *Conn) error { _, err := c.WhoAmI(ctx); return err }},
	{"Ephemerals", func(ctx context.Context, c *Conn) error { _, err := c.Ephemerals(ctx, "/"); return err }},
	{"Sync", func(ctx context.Context, c *Conn) error { return c.Sync(ctx, "/") }},
	{"AddAuth", func(ctx context.Context, c *Conn) error { return c.AddAuth(ctx, "digest", []byte("u:p")) }},
}

// replyFrames is the input form of FuzzReplies' replies: each payload
// after a 2-byte length; the fake server frames them.
func replyFrames(payloads ...[]byte) []byte {
	var out []byte
	for _, p := range payloads {
		out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
		out = append(out, p...)
	}
	return out
}

func splitReplies(data []byte) [][]byte {
	var out [][]byte
	for len(data) >= 2 {
		n := min(int(binary.BigEndian.Uint16(data)), len(data)-2)
		out = append(out, data[2:2+n])
		data = data[2+n:]
	}
	return out
}

func reply(xid int32, code wire.Code, body wire.Record) []byte {
	recs := []wire.Record{&wire.ReplyHeader{Xid: xid, Zxid: int64(xid) + 10, Err: code}}
	if body != nil {
		recs = append(recs, body)
	}
	return wire.AppendRecords(nil, recs...)[4:]
}

// fakeServer answers one client connection: the handshake payload, then,
// once the client has sent want requests (pings aside), the replies, and
// closes. received gets each request's xid as it arrives.
func fakeServer(nc net.Conn, handshake []byte, replies [][]byte, want int, received chan<- int32) {
	defer close(received)
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err != nil {
		return
	}
	if _, err := nc.Write(wire.AppendFrame(nil, func(e *wire.Encoder) {
		for _, b := range handshake {
			e.Byte(b)
		}
	})); err != nil {
		return
	}
	for n := 0; n < want; {
		frame, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
		if err != nil {
			return
		}
		var h wire.RequestHeader
		d := wire.NewDecoder(frame, 0)
		h.Decode(d)
		if h.Type == wire.OpPing {
			continue
		}
		received <- h.Xid
		n++
	}
	for _, r := range replies {
		if _, err := nc.Write(wire.AppendFrame(nil, func(e *wire.Encoder) {
			for _, b := range r {
				e.Byte(b)
			}
		})); err != nil {
			return
		}
	}
}

// FuzzReplies connects the client to a fake server that answers the
// handshake with a fuzzed ConnectResponse, waits for the requests of
// fuzzCalls (the first ncalls of them), and sends fuzzed reply frames
// (see replyFrames) before closing: replies, error replies, pings,
// watcher events, auth replies, with headers and bodies in any state.
// The client must not panic or hang: Connect returns, every request
// written returns (a reply or ErrConnectionLoss) without waiting for its
// context, and Close returns. A request succeeds only if a frame with its
// xid and code 0 came, and fails with a server code only if a frame
// carried that code.
func FuzzReplies(f *testing.F) {
	hs := func(timeout int32) []byte {
		return wire.Marshal(&wire.ConnectResponse{TimeOut: timeout, SessionID: 0x77, Passwd: make([]byte, 16), HasReadOnly: true})
	}
	stat := wire.Stat{Czxid: 1, Mzxid: 2, Version: 1, DataLength: 1}
	good := replyFrames(
		reply(wire.XidNotification, 0, &wire.WatcherEvent{Type: wire.EventNodeDataChanged, State: 3, Path: "/app/a"}),
		reply(1, 0, &wire.GetDataResponse{Data: []byte("d"), Stat: stat}),
		reply(wire.XidPing, 0, nil),
		reply(2, 0, &wire.GetChildren2Response{Children: []string{"a", "b"}, Stat: stat}),
		reply(3, wire.ErrNoNode, nil),
		reply(4, 0, wire.FailedMultiResponse(3, 1, wire.ErrBadVersion)),
		reply(5, 0, &wire.MultiResponse{Results: []wire.MultiResult{
			{Type: wire.OpGetData, Data: []byte("d"), Stat: &stat},
			{Type: wire.OpError, Err: wire.ErrNoAuth},
		}}),
		reply(6, 0, &wire.CreateResponse{Path: "/app/d-0000000001"}),
		reply(7, 0, &wire.ErrorResponse{}),
		reply(8, 0, &wire.GetACLResponse{ACL: OpenACL, Stat: stat}),
		reply(9, 0, &wire.WhoAmIResponse{ClientInfo: []wire.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}}),
		reply(10, 0, &wire.GetEphemeralsResponse{Ephemerals: []string{"/app/d-0000000001"}}),
		reply(11, 0, &wire.SyncResponse{Path: "/app"}),
		reply(wire.XidAuth, 0, nil),
		reply(wire.XidNotification, 0, &wire.WatcherEvent{Type: wire.EventNodeDeleted, State: 3, Path: "/app/a"}),
		reply(wire.XidNotification, 0, &wire.WatcherEvent{Type: wire.EventNodeChildrenChanged, State: 3, Path: "/app"}),
	)
	f.Add(hs(30000), uint8(len(fuzzCalls)), good)
	f.Add(hs(30000), uint8(1), replyFrames(reply(1, 0, &wire.GetDataResponse{Data: make([]byte, fuzzMaxBuffer), Stat: stat})))
	f.Add(hs(30000), uint8(2), replyFrames(reply(2, 0, nil), reply(1, 0, nil)))
	f.Add(hs(30000), uint8(3), replyFrames(reply(1, wire.ErrNoNode, nil), reply(2, wire.ErrNoAuth, nil), reply(3, 0, &wire.ExistsResponse{Stat: stat})))
	f.Add(hs(30000), uint8(12), replyFrames(reply(wire.XidAuth, wire.ErrAuthFailed, nil)))
	f.Add(hs(30000), uint8(5), replyFrames(reply(1, 0, &wire.GetDataResponse{}), reply(2, 0, &wire.GetChildren2Response{}),
		reply(3, 0, &wire.ExistsResponse{}), reply(4, 0, &wire.MultiResponse{}), reply(5, 0, &wire.MultiHeader{Type: 99, Err: -1})))
	f.Add(hs(1), uint8(1), replyFrames(reply(1, 0, &wire.GetDataResponse{})))
	f.Add(hs(0), uint8(1), []byte{})
	f.Add([]byte{0, 0, 0, 0}, uint8(1), []byte{})
	f.Add(hs(30000)[:20], uint8(1), []byte{})

	f.Fuzz(func(t *testing.T, handshake []byte, ncalls uint8, replies []byte) {
		calls := fuzzCalls[:int(ncalls)%(len(fuzzCalls)+1)]
		frames := splitReplies(replies)
		received := make(chan int32, len(calls))
		redial := make(chan struct{})
		var dials int
		var once sync.Once
		dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
			dials++ // the session loop dials one at a time
			if dials == 1 {
				cli, srv := net.Pipe()
				go fakeServer(srv, handshake, frames, len(calls), received)
				return cli, nil
			}
			once.Do(func() { close(redial) })
			return nil, errors.New("no second server")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		connectCtx, stopConnect := context.WithCancel(ctx)
		go func() {
			select {
			case <-redial: // the handshake was refused: stop waiting for a session
				stopConnect()
			case <-connectCtx.Done():
			}
		}()
		c, err := Connect(connectCtx, "127.0.0.1:1/app", WithDialer(dial), WithMaxBuffer(fuzzMaxBuffer),
			WithSessionTimeout(30*time.Second), WithBackoff(time.Millisecond, time.Millisecond))
		stopConnect()
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("Connect hung: %v", err)
			}
			for range received { // the fake server ends with the pipe
			}
			return
		}
		defer c.Close()
		var resp wire.ConnectResponse
		if err := wire.Unmarshal(handshake, &resp, fuzzMaxBuffer); err != nil {
			t.Fatalf("connected after a handshake that does not decode: %v", err)
		}
		if c.SessionID() != resp.SessionID {
			t.Fatalf("session %#x, the server gave %#x", c.SessionID(), resp.SessionID)
		}

		// Issue the calls one at a time, each once the server has the
		// previous one, so that their xids are their positions.
		var results []chan error
		sent := 0
		for _, call := range calls {
			done := make(chan error, 1)
			results = append(results, done)
			go func() { done <- call.run(ctx, c) }()
			xid, ok := <-received
			if !ok {
				break // the connection died first: this call waits for a reconnect
			}
			if want := int32(sent + 1); call.name != "AddAuth" && xid != want {
				t.Fatalf("%s went out with xid %d, want %d", call.name, xid, want)
			}
			sent++
		}
		for range received {
		}
		// The server has closed: every call it received has its answer.
		codes := replyCodes(frames)
		for i, done := range results[:sent] {
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s hangs after the connection closed", calls[i].name)
			}
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				t.Fatalf("%s waited for its context: %v", calls[i].name, err)
			}
			xid := int32(i + 1)
			if calls[i].name == "AddAuth" {
				xid = wire.XidAuth
			}
			var code wire.Code
			switch {
			case calls[i].name == "Multi":
				// Its error is the failing op's code, from the body.
			case err == nil:
				if !codes[xid][wire.CodeOK] && !(calls[i].name == "ExistsW" && codes[xid][wire.ErrNoNode]) {
					t.Fatalf("%s succeeded without a reply to xid %d", calls[i].name, xid)
				}
			case errors.As(err, &code) && !clientMade[code] && !codes[xid][code]:
				t.Fatalf("%s failed with %v, which no reply to xid %d carried", calls[i].name, code, xid)
			}
		}
		c.Close()
		for _, done := range results[sent:] {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("a call waiting for a reconnect outlives Close")
			}
		}
	})
}

// clientMade are the codes the client gives requests itself: in flight
// when the connection drops, or when the Conn ends.
var clientMade = map[wire.Code]bool{ErrConnectionLoss: true, ErrSessionExpired: true, ErrAuthFailed: true}

// replyCodes returns, by xid, the codes the reply headers among frames
// carry.
func replyCodes(frames [][]byte) map[int32]map[wire.Code]bool {
	out := map[int32]map[wire.Code]bool{}
	for _, fr := range frames {
		var h wire.ReplyHeader
		d := wire.NewDecoder(fr, 0)
		h.Decode(d)
		if d.Err() != nil {
			continue
		}
		if out[h.Xid] == nil {
			out[h.Xid] = map[wire.Code]bool{}
		}
		out[h.Xid][h.Err] = true
	}
	return out
}
