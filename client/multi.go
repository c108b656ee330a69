package client

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenzk/warden/wire"
)

// Op is one write operation of a Multi transaction; build it with
// CreateOp, CreateTTLOp, CreateContainerOp, DeleteOp, SetDataOp or CheckOp.
type Op struct {
	op      wire.OpCode
	path    string
	data    []byte
	acl     []ACL
	mode    CreateMode
	version int32
	ttl     time.Duration
}

// CreateOp creates a node (create; the result has a Path but no Stat).
func CreateOp(path string, data []byte, mode CreateMode, acl []ACL) Op {
	return Op{op: wire.OpCreate, path: path, data: data, mode: mode, acl: acl}
}

// CreateTTLOp creates a node in a TTL mode (createTTL).
func CreateTTLOp(path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) Op {
	return Op{op: wire.OpCreateTTL, path: path, data: data, mode: mode, acl: acl, ttl: ttl}
}

// CreateContainerOp creates a container node (createContainer).
func CreateContainerOp(path string, data []byte, acl []ACL) Op {
	return Op{op: wire.OpCreateContainer, path: path, data: data, mode: Container, acl: acl}
}

// DeleteOp deletes a node if its version matches (-1: any).
func DeleteOp(path string, version int32) Op {
	return Op{op: wire.OpDelete, path: path, version: version}
}

// SetDataOp sets a node's data if its version matches (-1: any).
func SetDataOp(path string, data []byte, version int32) Op {
	return Op{op: wire.OpSetData, path: path, data: data, version: version}
}

// CheckOp fails the transaction unless the node's version matches.
func CheckOp(path string, version int32) Op {
	return Op{op: wire.OpCheck, path: path, version: version}
}

// OpResult is the result of one Multi op. Path is set for creates
// (chroot stripped), Stat for setData and for createTTL/createContainer
// ops. Err is the op's code when the transaction failed: the failing op's
// error, nil before it and ErrRuntimeInconsistency after it.
type OpResult struct {
	Path string
	Stat *Stat
	Err  error
}

func (c *Conn) multiOp(o Op) (wire.MultiOp, error) {
	sp, err := c.serverPath(o.path)
	if err != nil {
		return wire.MultiOp{}, err
	}
	switch o.op {
	case wire.OpCreate, wire.OpCreateTTL, wire.OpCreateContainer:
		op, rec, err := createRecord(sp, o.data, o.mode, o.acl, o.ttl, false)
		if err != nil {
			return wire.MultiOp{}, err
		}
		return wire.MultiOp{Type: op, Req: rec}, nil
	case wire.OpDelete:
		return wire.MultiOp{Type: o.op, Req: &wire.DeleteRequest{Path: sp, Version: o.version}}, nil
	case wire.OpSetData:
		return wire.MultiOp{Type: o.op, Req: &wire.SetDataRequest{Path: sp, Data: o.data, Version: o.version}}, nil
	case wire.OpCheck:
		return wire.MultiOp{Type: o.op, Req: &wire.CheckVersionRequest{Path: sp, Version: o.version}}, nil
	}
	return wire.MultiOp{}, fmt.Errorf("%w: zero Op (build ops with CreateOp, DeleteOp, …)", wire.ErrBadArguments)
}

// Multi runs ops as one all-or-nothing transaction. On failure err is the
// first failing op's code (errors.Is works) and the per-op results are
// still returned. An empty Multi does nothing and returns no results.
func (c *Conn) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	req := &wire.MultiRequest{Ops: make([]wire.MultiOp, 0, len(ops))}
	for _, o := range ops {
		mo, err := c.multiOp(o)
		if err != nil {
			return nil, err
		}
		req.Ops = append(req.Ops, mo)
	}
	var resp wire.MultiResponse
	if err := c.call(ctx, newRequest(wire.OpMulti, req, &resp)); err != nil {
		return nil, err
	}
	out := make([]OpResult, len(resp.Results))
	var first error
	for i, r := range resp.Results {
		out[i] = OpResult{Stat: r.Stat}
		if r.Path != "" {
			out[i].Path = c.stripChroot(r.Path)
		}
		if r.Type == wire.OpError && r.Err != wire.CodeOK {
			out[i].Err = r.Err
			if first == nil {
				first = r.Err
			}
		}
	}
	return out, first
}

// ReadOp is one read of a MultiRead; build it with GetDataReadOp or
// ChildrenReadOp.
type ReadOp struct {
	op   wire.OpCode
	path string
}

// GetDataReadOp reads a node's data and Stat.
func GetDataReadOp(path string) ReadOp { return ReadOp{op: wire.OpGetData, path: path} }

// ChildrenReadOp reads a node's child names.
func ChildrenReadOp(path string) ReadOp { return ReadOp{op: wire.OpGetChildren, path: path} }

// ReadResult is the result of one ReadOp: Data and Stat for
// GetDataReadOp, Children for ChildrenReadOp, or Err.
type ReadResult struct {
	Data     []byte
	Stat     *Stat
	Children []string
	Err      error
}

// MultiRead runs reads in one request (ZooKeeper 3.6+). Each op succeeds
// or fails on its own; err is only for the request as a whole.
func (c *Conn) MultiRead(ctx context.Context, ops ...ReadOp) ([]ReadResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	req := &wire.MultiRequest{Ops: make([]wire.MultiOp, 0, len(ops))}
	for _, o := range ops {
		sp, err := c.serverPath(o.path)
		if err != nil {
			return nil, err
		}
		var rec wire.Record
		switch o.op {
		case wire.OpGetData:
			rec = &wire.GetDataRequest{Path: sp}
		case wire.OpGetChildren:
			rec = &wire.GetChildrenRequest{Path: sp}
		default:
			return nil, fmt.Errorf("%w: zero ReadOp", wire.ErrBadArguments)
		}
		req.Ops = append(req.Ops, wire.MultiOp{Type: o.op, Req: rec})
	}
	var resp wire.MultiResponse
	if err := c.call(ctx, newRequest(wire.OpMultiRead, req, &resp)); err != nil {
		return nil, err
	}
	out := make([]ReadResult, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = ReadResult{Data: r.Data, Stat: r.Stat, Children: r.Children}
		if r.Type == wire.OpError {
			out[i].Err = r.Err
		}
	}
	return out, nil
}
