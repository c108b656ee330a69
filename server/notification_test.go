package server

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/fakeclock"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/wire"
)

// notifyEnv is what a TestNotificationZxid case works with: c holds the
// watches, w makes the changes.
type notifyEnv struct {
	srv   *Server
	clock *fakeclock.Clock
	c, w  *rawClient
}

// TestNotificationZxid: a notification's reply header carries the zxid of
// the transaction that fired it, as ZooKeeper 3.9+ sends it
// (ZOOKEEPER-4655), whatever the transaction: a client write, a multi, a
// session closed or expired, a container reaped. The catch-up events of
// SetWatches follow no one transaction and carry -1, as ZooKeeper's do.
func TestNotificationZxid(t *testing.T) {
	open := wire.OpenACLUnsafe
	create := func(c *rawClient, path string, flags wire.CreateMode) wire.Stat {
		var resp wire.Create2Response
		if code := c.do(wire.OpCreate2, &wire.CreateRequest{Path: path, ACL: open, Flags: int32(flags)}, &resp); code != wire.CodeOK {
			c.t.Fatalf("create2 %s: %v", path, code)
		}
		return resp.Stat
	}
	setData := func(c *rawClient, path string) wire.Stat {
		var resp wire.SetDataResponse
		if code := c.do(wire.OpSetData, &wire.SetDataRequest{Path: path, Data: []byte("x"), Version: -1}, &resp); code != wire.CodeOK {
			c.t.Fatalf("setData %s: %v", path, code)
		}
		return resp.Stat
	}
	// stat returns path's stat, once every write proposed so far is applied.
	stat := func(c *rawClient, path string) wire.Stat {
		c.do(wire.OpSync, &wire.SyncRequest{Path: path}, &wire.SyncResponse{})
		var resp wire.ExistsResponse
		if code := c.do(wire.OpExists, &wire.ExistsRequest{Path: path}, &resp); code != wire.CodeOK {
			c.t.Fatalf("exists %s: %v", path, code)
		}
		return resp.Stat
	}
	getData := func(c *rawClient, path string) {
		c.do(wire.OpGetData, &wire.GetDataRequest{Path: path, Watch: true}, &wire.GetDataResponse{})
	}
	existsW := func(c *rawClient, path string) {
		c.do(wire.OpExists, &wire.ExistsRequest{Path: path, Watch: true}, nil)
	}
	children := func(c *rawClient, path string) {
		c.do(wire.OpGetChildren, &wire.GetChildrenRequest{Path: path, Watch: true}, &wire.GetChildrenResponse{})
	}

	tests := []struct {
		name string
		// arm creates nodes and sets c's watches.
		arm func(e notifyEnv)
		// change makes the change and returns the zxid its events carry.
		change func(e notifyEnv) int64
		// want lists the events c receives, as "type path", in order.
		want []string
	}{
		{
			name: "setData: NodeDataChanged carries the write's mzxid",
			arm: func(e notifyEnv) {
				create(e.w, "/n", wire.ModePersistent)
				getData(e.c, "/n")
			},
			change: func(e notifyEnv) int64 { return setData(e.w, "/n").Mzxid },
			want:   []string{"data /n"},
		},
		{
			name: "create: NodeCreated and the parent's NodeChildrenChanged carry the czxid",
			arm: func(e notifyEnv) {
				create(e.w, "/p", wire.ModePersistent)
				existsW(e.c, "/p/n")
				children(e.c, "/p")
			},
			change: func(e notifyEnv) int64 { return create(e.w, "/p/n", wire.ModePersistent).Czxid },
			want:   []string{"created /p/n", "children /p"},
		},
		{
			name: "delete: NodeDeleted and the parent's NodeChildrenChanged carry the delete's zxid",
			arm: func(e notifyEnv) {
				create(e.w, "/p", wire.ModePersistent)
				create(e.w, "/p/n", wire.ModePersistent)
				getData(e.c, "/p/n")
				children(e.c, "/p")
			},
			change: func(e notifyEnv) int64 {
				h, _ := e.w.call(wire.OpDelete, &wire.DeleteRequest{Path: "/p/n", Version: -1})
				if h.Err != wire.CodeOK {
					e.w.t.Fatalf("delete: %v", h.Err)
				}
				if pz := stat(e.w, "/p").Pzxid; pz != h.Zxid {
					e.w.t.Fatalf("delete reply zxid %#x, parent pzxid %#x", h.Zxid, pz)
				}
				return h.Zxid
			},
			want: []string{"deleted /p/n", "children /p"},
		},
		{
			name: "persistent recursive watch: a create below it carries the czxid",
			arm: func(e notifyEnv) {
				create(e.w, "/r", wire.ModePersistent)
				create(e.w, "/r/a", wire.ModePersistent)
				e.c.do(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/r", Mode: wire.AddWatchPersistentRecursive}, &wire.ErrorResponse{})
			},
			change: func(e notifyEnv) int64 { return create(e.w, "/r/a/b", wire.ModePersistent).Czxid },
			want:   []string{"created /r/a/b"},
		},
		{
			name: "persistent recursive watch: a setData below it carries the mzxid",
			arm: func(e notifyEnv) {
				create(e.w, "/r", wire.ModePersistent)
				create(e.w, "/r/a", wire.ModePersistent)
				e.c.do(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/r", Mode: wire.AddWatchPersistentRecursive}, &wire.ErrorResponse{})
			},
			change: func(e notifyEnv) int64 { return setData(e.w, "/r/a").Mzxid },
			want:   []string{"data /r/a"},
		},
		{
			name: "multi: every event carries the multi's zxid",
			arm: func(e notifyEnv) {
				create(e.w, "/m1", wire.ModePersistent)
				create(e.w, "/m2", wire.ModePersistent)
				getData(e.c, "/m1")
				getData(e.c, "/m2")
			},
			change: func(e notifyEnv) int64 {
				var resp wire.MultiResponse
				e.w.do(wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
					{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/m1", Data: []byte("1"), Version: -1}},
					{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/m2", Data: []byte("2"), Version: -1}},
				}}, &resp)
				if len(resp.Results) != 2 || resp.Results[0].Stat == nil || resp.Results[1].Stat == nil ||
					resp.Results[0].Stat.Mzxid != resp.Results[1].Stat.Mzxid {
					e.w.t.Fatalf("multi = %+v", resp)
				}
				return resp.Results[0].Stat.Mzxid
			},
			want: []string{"data /m1", "data /m2"},
		},
		{
			name: "closeSession: the ephemeral's NodeDeleted carries the closeSession's zxid",
			arm: func(e notifyEnv) {
				create(e.w, "/e", wire.ModeEphemeral)
				existsW(e.c, "/e")
			},
			change: func(e notifyEnv) int64 {
				h, _ := e.w.call(wire.OpCloseSession, nil)
				if h.Err != wire.CodeOK {
					e.w.t.Fatalf("closeSession: %v", h.Err)
				}
				return h.Zxid
			},
			want: []string{"deleted /e"},
		},
		{
			name: "expiry: the ephemeral's NodeDeleted carries the expiry's zxid",
			arm: func(e notifyEnv) {
				create(e.w, "/e", wire.ModeEphemeral)
				existsW(e.c, "/e")
			},
			change: func(e notifyEnv) int64 {
				// c is heard from at the new time, so only w's session expires.
				now := e.clock.Advance(time.Hour)
				e.c.do(wire.OpExists, &wire.ExistsRequest{Path: "/"}, nil)
				e.srv.ExpireSessions(now)
				return stat(e.c, "/").Pzxid // the deletion of /e
			},
			want: []string{"deleted /e"},
		},
		{
			name: "container reaped: NodeDeleted carries the deleteContainer's zxid",
			arm: func(e notifyEnv) {
				e.w.do(wire.OpCreateContainer, &wire.CreateRequest{Path: "/box", ACL: open, Flags: int32(wire.ModeContainer)}, &wire.Create2Response{})
				create(e.w, "/box/item", wire.ModePersistent)
				e.w.do(wire.OpDelete, &wire.DeleteRequest{Path: "/box/item", Version: -1}, nil)
				existsW(e.c, "/box")
			},
			change: func(e notifyEnv) int64 {
				e.srv.ExpireContainers(e.clock.Now())
				return stat(e.c, "/").Pzxid // the deletion of /box
			},
			want: []string{"deleted /box"},
		},
		{
			name: "SetWatches catch-up events carry -1",
			arm: func(e notifyEnv) {
				create(e.w, "/s", wire.ModePersistent)
			},
			change: func(e notifyEnv) int64 {
				seen := stat(e.c, "/s").Mzxid
				setData(e.w, "/s")
				e.c.do(wire.OpSetWatches, &wire.SetWatches{RelativeZxid: seen, DataWatches: []string{"/s"},
					ExistWatches: []string{}, ChildWatches: []string{}}, nil)
				return -1
			},
			want: []string{"data /s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, clock := startServer(t, nil)
			e := notifyEnv{srv: srv, clock: clock, c: newRawClient(t, srv), w: newRawClient(t, srv)}
			tt.arm(e)
			if ev := e.c.takeEvents(); len(ev) != 0 {
				t.Fatalf("events while arming: %+v", ev)
			}
			zxid := tt.change(e)
			// The sync is applied after the change, so every event the change
			// fired is queued before its reply.
			e.c.do(wire.OpSync, &wire.SyncRequest{Path: "/"}, &wire.SyncResponse{})
			var got []string
			for _, ev := range e.c.takeEvents() {
				got = append(got, eventName(ev.Type)+" "+ev.Path)
				if ev.Zxid != zxid {
					t.Errorf("%s %s: header zxid %s, want %s", eventName(ev.Type), ev.Path, zxidHex(ev.Zxid), zxidHex(zxid))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("events = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestNotificationFrame pins the notification's bytes down: the example of
// the protocol reference (NodeDataChanged "/foo" fired by zxid 6), and the
// -1 of an event no transaction caused.
func TestNotificationFrame(t *testing.T) {
	tests := []struct {
		zxid fsm.Zxid
		want string
	}{
		{6, "00000020 ffffffff 0000000000000006 00000000 00000003 00000003 00000004 2f666f6f"},
		{noTxnZxid, "00000020 ffffffff ffffffffffffffff 00000000 00000003 00000003 00000004 2f666f6f"},
	}
	for _, tt := range tests {
		got := hex.EncodeToString(eventFrame(tt.zxid, wire.EventNodeDataChanged, "/foo"))
		if want := strings.ReplaceAll(tt.want, " ", ""); got != want {
			t.Errorf("eventFrame(%s) = %s, want %s", tt.zxid, got, want)
		}
	}
}
