package server

import (
	"net"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// FuzzRequestFrames sends arbitrary request frames (header and body) down
// an established session and checks that the server survives and keeps
// serving: every frame gets a reply, an error reply or a closed
// connection, never a crash or a hang.
func FuzzRequestFrames(f *testing.F) {
	seed := func(op wire.OpCode, rec wire.Record) []byte {
		return wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1, Type: op}, rec)[4:]
	}
	f.Add(seed(wire.OpCreate, &wire.CreateRequest{Path: "/a", ACL: wire.OpenACLUnsafe}))
	f.Add(seed(wire.OpCreate2, &wire.CreateRequest{Path: "/a/", ACL: wire.OpenACLUnsafe, Flags: 2}))
	f.Add(seed(wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/t", ACL: wire.OpenACLUnsafe, Flags: 5, TTL: 10}))
	f.Add(seed(wire.OpSetData, &wire.SetDataRequest{Path: "/", Version: -1}))
	f.Add(seed(wire.OpSetACL, &wire.SetACLRequest{Path: "/", ACL: []wire.ACL{{Perms: 1, ID: wire.ID{Scheme: "ip", ID: "1.2.3.4/40"}}}}))
	f.Add(seed(wire.OpGetData, &wire.GetDataRequest{Path: "/zookeeper", Watch: true}))
	f.Add(seed(wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: &wire.CreateRequest{Path: "/m", ACL: wire.OpenACLUnsafe}},
		{Type: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: "/m", Version: 0}},
	}}))
	f.Add(seed(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpGetChildren, Req: &wire.GetChildrenRequest{Path: "/"}},
	}}))
	f.Add(seed(wire.OpSetWatches2, &wire.SetWatches2{DataWatches: []string{"/x"}, PersistentRecursiveWatches: []string{"/"}}))
	f.Add(seed(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/", Mode: 1}))
	f.Add(seed(wire.OpRemoveWatches, &wire.RemoveWatchesRequest{Path: "/", Type: 9}))
	f.Add(seed(wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("a:b")}))
	f.Add(seed(wire.OpSASL, &wire.GetSASLRequest{}))
	f.Add(seed(wire.OpGetEphemerals, &wire.GetEphemeralsRequest{PrefixPath: ""}))
	f.Add([]byte{0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11})

	srv, _ := startServer(f, func(c *Config) { c.ExtendedTypesEnabled = true })

	f.Fuzz(func(t *testing.T, payload []byte) {
		nc := rawSession(t, srv)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		frame := wire.AppendFrame(nil, func(e *wire.Encoder) {
			for _, b := range payload {
				e.Byte(b)
			}
		})
		if _, err := nc.Write(frame); err != nil {
			return
		}
		// Read until the server replies with a frame or closes; either is
		// fine. A timeout is a hang.
		if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() && len(payload) >= 8 {
				t.Fatalf("no reply and no close within 10s for %x", payload)
			}
		}
		nc.Close()
		if out := fourLetter(t, srv, "ruok"); out != "imok" {
			t.Fatalf("server unwell after %x: ruok = %q", payload, out)
		}
	})
}
