package client

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenzk/warden/wire"
)

// createOp picks the opcode and request record for a create.
func createRecord(sp string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration, stat bool) (wire.OpCode, wire.Record, error) {
	if !mode.Valid() {
		return 0, nil, fmt.Errorf("%w: create mode %d", wire.ErrBadArguments, mode)
	}
	if mode.TTL() != (ttl > 0) {
		return 0, nil, fmt.Errorf("%w: TTL modes need a TTL > 0 (CreateTTL), other modes none", wire.ErrBadArguments)
	}
	if mode.TTL() {
		return wire.OpCreateTTL, &wire.CreateTTLRequest{Path: sp, Data: data, ACL: acl, Flags: int32(mode), TTL: ttl.Milliseconds()}, nil
	}
	req := &wire.CreateRequest{Path: sp, Data: data, ACL: acl, Flags: int32(mode)}
	switch {
	case mode.Container():
		return wire.OpCreateContainer, req, nil
	case stat:
		return wire.OpCreate2, req, nil
	}
	return wire.OpCreate, req, nil
}

// Create creates a node and returns its path (with the sequence suffix
// for sequential modes). Container mode uses createContainer; TTL modes
// need CreateTTL.
func (c *Conn) Create(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL) (string, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return "", err
	}
	op, body, err := createRecord(sp, data, mode, acl, 0, false)
	if err != nil {
		return "", err
	}
	if op != wire.OpCreate {
		p, _, err := c.create2(ctx, op, body)
		return p, err
	}
	var resp wire.CreateResponse
	if err := c.call(ctx, newRequest(op, body, &resp)); err != nil {
		return "", err
	}
	return c.stripChroot(resp.Path), nil
}

func (c *Conn) create2(ctx context.Context, op wire.OpCode, body wire.Record) (string, Stat, error) {
	var resp wire.Create2Response
	if err := c.call(ctx, newRequest(op, body, &resp)); err != nil {
		return "", Stat{}, err
	}
	return c.stripChroot(resp.Path), resp.Stat, nil
}

// CreateStat is Create returning the new node's Stat (create2).
func (c *Conn) CreateStat(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL) (string, Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return "", Stat{}, err
	}
	op, body, err := createRecord(sp, data, mode, acl, 0, true)
	if err != nil {
		return "", Stat{}, err
	}
	return c.create2(ctx, op, body)
}

// CreateContainer creates a container node: the server deletes it once
// its last child is gone.
func (c *Conn) CreateContainer(ctx context.Context, path string, data []byte, acl []ACL) (string, Stat, error) {
	return c.CreateStat(ctx, path, data, Container, acl)
}

// CreateTTL creates a node in a TTL mode (PersistentWithTTL or
// PersistentSequentialWithTTL): the server deletes it when it has had no
// children and no change for ttl. The server must enable extended types.
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) (string, Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return "", Stat{}, err
	}
	if !mode.TTL() {
		return "", Stat{}, fmt.Errorf("%w: CreateTTL needs a TTL mode, got %d", wire.ErrBadArguments, mode)
	}
	op, body, err := createRecord(sp, data, mode, acl, ttl, true)
	if err != nil {
		return "", Stat{}, err
	}
	return c.create2(ctx, op, body)
}

// Delete deletes a node; version -1 matches any version.
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	return c.call(ctx, newRequest(wire.OpDelete, &wire.DeleteRequest{Path: sp, Version: version}, nil))
}

// Exists reports whether a node exists, with its Stat when it does.
func (c *Conn) Exists(ctx context.Context, path string) (Stat, bool, error) {
	s, ok, _, err := c.exists(ctx, path, false)
	return s, ok, err
}

// ExistsW is Exists that also sets a one-shot watch, even when the node
// is missing: the channel then receives NodeCreated; otherwise
// NodeDataChanged or NodeDeleted. The channel receives one Event and
// closes.
func (c *Conn) ExistsW(ctx context.Context, path string) (Stat, bool, <-chan Event, error) {
	return c.exists(ctx, path, true)
}

func (c *Conn) exists(ctx context.Context, path string, watch bool) (Stat, bool, <-chan Event, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return Stat{}, false, nil, err
	}
	var resp wire.ExistsResponse
	r := newRequest(wire.OpExists, &wire.ExistsRequest{Path: sp, Watch: watch}, &resp)
	var ch chan Event
	if watch {
		ch = make(chan Event, 1)
		r.onReply = func(code wire.Code) {
			switch code {
			case wire.CodeOK:
				c.watches.addOneShot(kindData, path, ch)
			case wire.ErrNoNode:
				c.watches.addOneShot(kindExist, path, ch)
			}
		}
	}
	switch err := c.call(ctx, r); err {
	case nil:
		return resp.Stat, true, ch, nil
	case wire.ErrNoNode:
		return Stat{}, false, ch, nil
	default:
		return Stat{}, false, nil, err
	}
}

// Get returns a node's data and Stat.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	d, s, _, err := c.get(ctx, path, false)
	return d, s, err
}

// GetW is Get that also sets a one-shot data watch (NodeDataChanged or
// NodeDeleted). No watch is set when the node is missing (ErrNoNode).
func (c *Conn) GetW(ctx context.Context, path string) ([]byte, Stat, <-chan Event, error) {
	return c.get(ctx, path, true)
}

// ConfigPath is where a server keeps the ensemble's membership.
const ConfigPath = "/zookeeper/config"

// GetConfig returns the ensemble's membership (the data of
// /zookeeper/config: "server.N=..." lines and "version=...", see
// ParseConfig) and its Stat. Like ZooKeeper's getConfig it is a getData
// (opcode 4) of /zookeeper/config that ignores the chroot: the
// membership is the server's, not the application's.
func (c *Conn) GetConfig(ctx context.Context) ([]byte, Stat, error) {
	d, s, _, err := c.getAt(ctx, ConfigPath, ConfigPath, false)
	return d, s, err
}

// GetConfigW is GetConfig that also sets a one-shot data watch on the
// membership: the channel receives an Event with Path ConfigPath (whatever
// the chroot) when a reconfig commits, and closes.
func (c *Conn) GetConfigW(ctx context.Context) ([]byte, Stat, <-chan Event, error) {
	var resp wire.GetDataResponse
	r := newRequest(wire.OpGetData, &wire.GetDataRequest{Path: ConfigPath, Watch: true}, &resp)
	ch := make(chan Event, 1)
	r.onReply = func(code wire.Code) {
		if code == wire.CodeOK {
			c.watches.addConfig(ch)
		}
	}
	if err := c.call(ctx, r); err != nil {
		return nil, Stat{}, nil, err
	}
	return resp.Data, resp.Stat, ch, nil
}

func (c *Conn) get(ctx context.Context, path string, watch bool) ([]byte, Stat, <-chan Event, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	return c.getAt(ctx, sp, path, watch)
}

// getAt reads server path sp, known to the caller as path.
func (c *Conn) getAt(ctx context.Context, sp, path string, watch bool) ([]byte, Stat, <-chan Event, error) {
	var resp wire.GetDataResponse
	r := newRequest(wire.OpGetData, &wire.GetDataRequest{Path: sp, Watch: watch}, &resp)
	var ch chan Event
	if watch {
		ch = make(chan Event, 1)
		r.onReply = func(code wire.Code) {
			if code == wire.CodeOK {
				c.watches.addOneShot(kindData, path, ch)
			}
		}
	}
	if err := c.call(ctx, r); err != nil {
		return nil, Stat{}, nil, err
	}
	return resp.Data, resp.Stat, ch, nil
}

// Set replaces a node's data if its version matches (-1: any version).
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return Stat{}, err
	}
	var resp wire.SetDataResponse
	if err := c.call(ctx, newRequest(wire.OpSetData, &wire.SetDataRequest{Path: sp, Data: data, Version: version}, &resp)); err != nil {
		return Stat{}, err
	}
	return resp.Stat, nil
}

// Children returns the names (not paths) of a node's children, in no
// particular order, and the node's Stat.
func (c *Conn) Children(ctx context.Context, path string) ([]string, Stat, error) {
	k, s, _, err := c.children(ctx, path, false)
	return k, s, err
}

// ChildrenW is Children that also sets a one-shot child watch
// (NodeChildrenChanged or NodeDeleted).
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, Stat, <-chan Event, error) {
	return c.children(ctx, path, true)
}

func (c *Conn) children(ctx context.Context, path string, watch bool) ([]string, Stat, <-chan Event, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	var resp wire.GetChildren2Response
	r := newRequest(wire.OpGetChildren2, &wire.GetChildren2Request{Path: sp, Watch: watch}, &resp)
	var ch chan Event
	if watch {
		ch = make(chan Event, 1)
		r.onReply = func(code wire.Code) {
			if code == wire.CodeOK {
				c.watches.addOneShot(kindChild, path, ch)
			}
		}
	}
	if err := c.call(ctx, r); err != nil {
		return nil, Stat{}, nil, err
	}
	if resp.Children == nil {
		resp.Children = []string{}
	}
	return resp.Children, resp.Stat, ch, nil
}

// GetACL returns a node's ACL and Stat.
func (c *Conn) GetACL(ctx context.Context, path string) ([]ACL, Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, Stat{}, err
	}
	var resp wire.GetACLResponse
	if err := c.call(ctx, newRequest(wire.OpGetACL, &wire.GetACLRequest{Path: sp}, &resp)); err != nil {
		return nil, Stat{}, err
	}
	return resp.ACL, resp.Stat, nil
}

// SetACL replaces a node's ACL if its aversion matches (-1: any).
func (c *Conn) SetACL(ctx context.Context, path string, acl []ACL, version int32) (Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return Stat{}, err
	}
	var resp wire.SetACLResponse
	if err := c.call(ctx, newRequest(wire.OpSetACL, &wire.SetACLRequest{Path: sp, ACL: acl, Version: version}, &resp)); err != nil {
		return Stat{}, err
	}
	return resp.Stat, nil
}

// Sync waits until the server this Conn talks to has caught up with the
// leader, so a following read sees every write committed before Sync.
func (c *Conn) Sync(ctx context.Context, path string) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	var resp wire.SyncResponse
	return c.call(ctx, newRequest(wire.OpSync, &wire.SyncRequest{Path: sp}, &resp))
}

// AddAuth adds credentials to the session (e.g. "digest",
// "user:password"). Once accepted they are remembered and re-sent on
// every reconnect; after ErrConnectionLoss call AddAuth again. A rejection
// (ErrAuthFailed) is fatal for the Conn: ZooKeeper closes the connection
// and the Conn moves to StateAuthFailed.
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	if err := c.call(ctx, newRequest(wire.OpAuth, &wire.AuthPacket{Scheme: scheme, Auth: auth}, nil)); err != nil {
		return err
	}
	c.mu.Lock()
	c.auths = append(c.auths, authInfo{scheme, auth})
	c.mu.Unlock()
	return nil
}

// WhoAmI returns the identities the server has authenticated for this
// connection (ZooKeeper 3.7+).
func (c *Conn) WhoAmI(ctx context.Context) ([]wire.ClientInfo, error) {
	var resp wire.WhoAmIResponse
	if err := c.call(ctx, newRequest(wire.OpWhoAmI, nil, &resp)); err != nil {
		return nil, err
	}
	return resp.ClientInfo, nil
}

// Ephemerals returns the paths of this session's ephemeral nodes whose
// path starts with prefix (a plain string prefix, "/" for all).
func (c *Conn) Ephemerals(ctx context.Context, prefix string) ([]string, error) {
	sp, err := c.serverPath(prefix)
	if err != nil {
		return nil, err
	}
	var resp wire.GetEphemeralsResponse
	if err := c.call(ctx, newRequest(wire.OpGetEphemerals, &wire.GetEphemeralsRequest{PrefixPath: sp}, &resp)); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp.Ephemerals))
	for _, p := range resp.Ephemerals {
		out = append(out, c.stripChroot(p))
	}
	return out, nil
}

// AllChildrenNumber returns the number of descendants of path.
func (c *Conn) AllChildrenNumber(ctx context.Context, path string) (int32, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return 0, err
	}
	var resp wire.GetAllChildrenNumberResponse
	if err := c.call(ctx, newRequest(wire.OpGetAllChildrenNumber, &wire.GetAllChildrenNumberRequest{Path: sp}, &resp)); err != nil {
		return 0, err
	}
	return resp.TotalNumber, nil
}
