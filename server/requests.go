package server

import (
	"strings"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/internal/watch"
	"github.com/wardenzk/warden/wire"
)

// isWrite reports whether op goes through the log: every op that changes
// replicated state, and sync, whose reply must follow every write proposed
// before it.
func isWrite(op wire.OpCode) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL,
		wire.OpDelete, wire.OpDeleteContainer, wire.OpSetData, wire.OpSetACL,
		wire.OpMulti, wire.OpReconfig, wire.OpCloseSession, wire.OpSync:
		return true
	}
	return false
}

// dispatch routes one request. It reports whether the connection goes on.
func (c *conn) dispatch(r *reply, body []byte) bool {
	c.stats.lastOp.Store(int32(r.op))
	if r.xid >= 0 {
		c.stats.lastCxid.Store(r.xid)
	}
	r.caller = c.caller()
	switch {
	case r.op != wire.OpAuth && r.op != wire.OpSASL && !c.authenticated():
		return c.refuseUnauthenticated(r)
	case r.op == wire.OpPing:
		r.exec = func() []byte {
			zxid := c.srv.lastZxid.Load()
			c.stats.lastZxid.Store(zxid)
			return replyFrame(wire.XidPing, zxid, wire.CodeOK, nil)
		}
		return c.enqueue(r)
	case r.op == wire.OpAuth:
		return c.authPacket(r, body)
	case r.op == wire.OpSASL:
		return c.saslPacket(r, body)
	case c.readOnly.Load() && refusedReadOnly(r.op):
		r.exec = func() []byte { return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrNotReadOnly, nil) }
		return c.enqueue(r)
	case isWrite(r.op):
		return c.write(r, body)
	}
	read := readHandler(r.op)
	if read == nil {
		// Unknown opcodes, and check outside a multi, are refused as
		// ZooKeeper refuses them: UNIMPLEMENTED, then the connection closes.
		c.log.Info("unsupported opcode; closing the connection", "op", int32(r.op))
		r.exec = func() []byte { return replyFrame(r.xid, -1, wire.ErrUnimplemented, nil) }
		r.closeAfter = true
		c.enqueue(r)
		return false
	}
	req, hasBody := wire.RequestFor(r.op)
	if hasBody {
		if err := c.decode(body, req); err != nil {
			c.log.Info("undecodable request", "op", int32(r.op), "err", err)
			r.exec = func() []byte { return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrMarshallingError, nil) }
			return c.enqueue(r)
		}
	}
	r.read, r.req = read, req
	return c.enqueue(r)
}

// decode decodes a request body into req with the reader's own decoder,
// which then lets go of body.
func (c *conn) decode(body []byte, req wire.Record) error {
	d := &c.dec
	d.Reset(body, c.srv.maxBuffer)
	req.Decode(d)
	err := d.Err()
	d.Reset(nil, 0)
	return err
}

// write queues a write request; the processor proposes it in order.
func (c *conn) write(r *reply, body []byte) bool {
	r.done = make(chan struct{})
	r.closeAfter = r.op == wire.OpCloseSession
	r.body = body // a slice of the request's own frame, never reused
	if !c.enqueue(r) {
		return false
	}
	return !r.closeAfter
}

// refusal returns the reply of a write refused before the log, or nil.
// While the disk is full, writes get THROTTLEDOP (the retryable "try later"
// code clients know) instead of queueing without bound.
func (c *conn) refusal(r *reply) []byte {
	if !c.srv.node.Paused() || r.op == wire.OpCloseSession {
		return nil
	}
	if c.srv.stalled() {
		// An ensemble member that cannot write its log sends its clients
		// to another member.
		go c.close("this member's disk is full; the client moves to another member")
	}
	c.srv.stats.throttled.Add(1)
	return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrThrottled, nil)
}

// propose sends a queued write to the log. Its reply is queued at apply
// time, under the state machine's lock, right after the events it caused,
// followed by the requests that follow it. local marks the write of a
// local session; upgrade first makes the local session global, with a
// createSession entry proposed right before the write (localWrite decides
// both).
func (c *conn) propose(r *reply, local, upgrade bool) bool {
	sid := c.sessionID()
	if r.op == wire.OpCloseSession {
		// From now on the session cannot be re-attached elsewhere.
		c.srv.markClosing(sid)
	}
	if upgrade && !c.upgrade(sid) {
		return false
	}
	e := &fsm.Entry{Op: r.op, Session: sid, Xid: r.xid, Auth: r.caller.IDs, Body: r.body, Local: local}
	if r.op == wire.OpReconfig {
		e.Body = c.srv.reconfigBody(r.body)
	}
	writes := c.srv.sessionWrites(sid)
	if writes != nil {
		writes.add()
	}
	err := c.srv.propose(e, func(out fsm.Output, err error) {
		if writes != nil {
			defer writes.done()
		}
		if err != nil {
			// The outcome is unknown (the leader changed, ...): the client
			// sees ConnectionLoss, as with ZooKeeper, and retries.
			c.log.Info("write outcome unknown; closing the connection", "err", err)
			c.close("write lost: " + err.Error())
			return
		}
		c.stats.lastZxid.Store(int64(out.Zxid))
		c.srv.audit.request(c, r, out)
		f := replyFrame(r.xid, int64(out.Zxid), out.Err, out.Resp)
		c.observe(r)
		if r.closeAfter {
			c.sendAndClose(f)
		} else {
			c.send(f)
		}
		c.runFollowers(r)
		close(r.done)
	})
	if err != nil {
		if writes != nil {
			writes.done()
		}
		c.close("write refused: " + err.Error())
		return false
	}
	if c.srv.audit == nil {
		// The entry holds its own encoding now; only the audit log reads
		// the body again. Memory in flight is then one copy per write.
		r.body = nil
	}
	return true
}

// readFunc runs a decoded read request and queues its reply (conn.read).
// Handlers are method expressions, so choosing one allocates nothing.
type readFunc func(c *conn, r *reply, req wire.Record) []byte

// readHandler returns the handler of a read opcode, or nil.
func readHandler(op wire.OpCode) readFunc {
	switch op {
	case wire.OpExists:
		return (*conn).exists
	case wire.OpGetData:
		return (*conn).getData
	case wire.OpGetChildren, wire.OpGetChildren2:
		return (*conn).getChildren
	case wire.OpGetACL:
		return (*conn).getACL
	case wire.OpGetAllChildrenNumber:
		return (*conn).allChildrenNumber
	case wire.OpGetEphemerals:
		return (*conn).getEphemerals
	case wire.OpMultiRead:
		return (*conn).multiRead
	case wire.OpWhoAmI:
		return (*conn).whoAmI
	case wire.OpSetWatches, wire.OpSetWatches2:
		return (*conn).setWatches
	case wire.OpAddWatch:
		return (*conn).addWatch
	case wire.OpCheckWatches, wire.OpRemoveWatches:
		return (*conn).checkOrRemoveWatches
	}
	return nil
}

// read runs f under the state machine's read lock and queues the reply,
// with the current zxid, before the lock is released: an event for a watch
// f armed can only be queued after it.
func (c *conn) read(r *reply, f func(t *tree.Tree) (wire.Record, error)) []byte {
	s := c.srv
	if !r.underApply { // the apply goroutine already holds s.mu
		s.node.RLock()
		defer s.node.RUnlock()
	}
	resp, err := f(s.node.FSM().Tree())
	zxid := int64(s.node.FSM().LastZxid())
	c.stats.lastZxid.Store(zxid)
	c.observe(r)
	c.send(replyFrame(r.xid, zxid, wire.CodeOf(err), resp))
	return nil
}

// watchLocked registers a watch; the caller holds s.mu.RLock. Nothing is
// registered for a closed connection: close marks it before forget drops
// its watches under wmu, so a late registration cannot leak.
func (c *conn) watchLocked(add func(w *watch.Registry)) {
	c.srv.wmu.Lock()
	if !c.isClosed() {
		add(c.srv.watches)
	}
	c.srv.wmu.Unlock()
}

func (c *conn) exists(r *reply, req wire.Record) []byte {
	q := req.(*wire.ExistsRequest)
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		if strings.IndexByte(q.Path, 0) >= 0 {
			return nil, wire.ErrBadArguments
		}
		st, err := t.Exists(q.Path, r.caller)
		if q.Watch && (err == nil || err == wire.ErrNoNode) {
			c.watchLocked(func(w *watch.Registry) { w.AddData(q.Path, c.id) })
		}
		return &wire.ExistsResponse{Stat: st}, err
	})
}

func (c *conn) getData(r *reply, req wire.Record) []byte {
	q := req.(*wire.GetDataRequest)
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		data, st, err := t.GetData(q.Path, r.caller)
		if err == nil && q.Watch {
			c.watchLocked(func(w *watch.Registry) { w.AddData(q.Path, c.id) })
		}
		return &wire.GetDataResponse{Data: data, Stat: st}, err
	})
}

func (c *conn) getChildren(r *reply, req wire.Record) []byte {
	var path string
	var watchIt bool
	switch q := req.(type) {
	case *wire.GetChildrenRequest:
		path, watchIt = q.Path, q.Watch
	case *wire.GetChildren2Request:
		path, watchIt = q.Path, q.Watch
	}
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		kids, st, err := t.GetChildren(path, r.caller)
		if err == nil && watchIt {
			c.watchLocked(func(w *watch.Registry) { w.AddChild(path, c.id) })
		}
		if r.op == wire.OpGetChildren {
			return &wire.GetChildrenResponse{Children: kids}, err
		}
		return &wire.GetChildren2Response{Children: kids, Stat: st}, err
	})
}

func (c *conn) getACL(r *reply, req wire.Record) []byte {
	q := req.(*wire.GetACLRequest)
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		acl, st, err := t.GetACL(q.Path, r.caller)
		return &wire.GetACLResponse{ACL: acl, Stat: st}, err
	})
}

func (c *conn) allChildrenNumber(r *reply, req wire.Record) []byte {
	q := req.(*wire.GetAllChildrenNumberRequest)
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		n, err := t.AllChildrenNumber(q.Path, r.caller)
		return &wire.GetAllChildrenNumberResponse{TotalNumber: n}, err
	})
}

func (c *conn) getEphemerals(r *reply, req wire.Record) []byte {
	q := req.(*wire.GetEphemeralsRequest)
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		list := t.Ephemerals(int64(c.sessionID()), q.PrefixPath)
		if list == nil {
			list = []string{}
		}
		return &wire.GetEphemeralsResponse{Ephemerals: list}, nil
	})
}

// multiRead answers each op independently; failures become error results.
func (c *conn) multiRead(r *reply, req wire.Record) []byte {
	q := req.(*wire.MultiRequest)
	return c.read(r, func(t *tree.Tree) (wire.Record, error) {
		caller := r.caller
		results := make([]wire.MultiResult, 0, len(q.Ops))
		for _, op := range q.Ops {
			switch o := op.Req.(type) {
			case *wire.GetDataRequest:
				data, st, err := t.GetData(o.Path, caller)
				if err != nil {
					results = append(results, wire.MultiResult{Type: wire.OpError, Err: wire.CodeOf(err)})
					continue
				}
				if o.Watch {
					c.watchLocked(func(w *watch.Registry) { w.AddData(o.Path, c.id) })
				}
				results = append(results, wire.MultiResult{Type: wire.OpGetData, Data: data, Stat: &st})
			case *wire.GetChildrenRequest:
				kids, _, err := t.GetChildren(o.Path, caller)
				if err != nil {
					results = append(results, wire.MultiResult{Type: wire.OpError, Err: wire.CodeOf(err)})
					continue
				}
				if o.Watch {
					c.watchLocked(func(w *watch.Registry) { w.AddChild(o.Path, c.id) })
				}
				results = append(results, wire.MultiResult{Type: wire.OpGetChildren, Children: kids})
			default:
				return nil, wire.ErrMarshallingError
			}
		}
		return &wire.MultiResponse{Results: results}, nil
	})
}

func (c *conn) whoAmI(r *reply, _ wire.Record) []byte {
	ids := r.caller.IDs
	infos := make([]wire.ClientInfo, 0, len(ids))
	for _, id := range ids {
		infos = append(infos, wire.ClientInfo{AuthScheme: id.Scheme, User: auth.UserName(id.Scheme, id.ID)})
	}
	return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.CodeOK, &wire.WhoAmIResponse{ClientInfo: infos})
}

// setWatches re-registers a reconnecting client's watches, first sending
// the events it missed while away (compared by zxid, as ZooKeeper does).
// Those events stand for no one transaction: their header zxid is
// noTxnZxid, as ZooKeeper's are.
func (c *conn) setWatches(r *reply, req wire.Record) []byte {
	var sw wire.SetWatches2
	switch q := req.(type) {
	case *wire.SetWatches:
		sw = wire.SetWatches2{RelativeZxid: q.RelativeZxid, DataWatches: q.DataWatches,
			ExistWatches: q.ExistWatches, ChildWatches: q.ChildWatches}
	case *wire.SetWatches2:
		sw = *q
	}
	s := c.srv
	if !r.underApply { // the apply goroutine already holds s.mu
		s.node.RLock()
		defer s.node.RUnlock()
	}
	t := s.node.FSM().Tree()
	s.wmu.Lock()
	if c.isClosed() {
		s.wmu.Unlock()
		return nil
	}
	// rearm sends the event a path missed (deleted, or changed after the
	// client's last zxid) or registers its watch again.
	rearm := func(paths []string, changedAt func(*wire.Stat) int64, changed wire.EventType, add func(string, watch.WatcherID)) {
		for _, p := range paths {
			st, _, ok := t.Lookup(p)
			switch {
			case !ok:
				c.send(eventFrame(noTxnZxid, wire.EventNodeDeleted, p))
			case changedAt(&st) > sw.RelativeZxid:
				c.send(eventFrame(noTxnZxid, changed, p))
			default:
				add(p, c.id)
			}
		}
	}
	// ZooKeeper's order: data, exist, then child watches.
	rearm(sw.DataWatches, func(st *wire.Stat) int64 { return st.Mzxid }, wire.EventNodeDataChanged, s.watches.AddData)
	for _, p := range sw.ExistWatches {
		if _, _, ok := t.Lookup(p); ok {
			c.send(eventFrame(noTxnZxid, wire.EventNodeCreated, p))
		} else {
			s.watches.AddData(p, c.id)
		}
	}
	rearm(sw.ChildWatches, func(st *wire.Stat) int64 { return st.Pzxid }, wire.EventNodeChildrenChanged, s.watches.AddChild)
	for _, p := range sw.PersistentWatches {
		s.watches.AddPersistent(p, c.id, false)
	}
	for _, p := range sw.PersistentRecursiveWatches {
		s.watches.AddPersistent(p, c.id, true)
	}
	s.wmu.Unlock()
	c.observe(r)
	c.send(replyFrame(r.xid, int64(s.node.FSM().LastZxid()), wire.CodeOK, nil))
	return nil
}

func (c *conn) addWatch(r *reply, req wire.Record) []byte {
	q := req.(*wire.AddWatchRequest)
	if q.Mode != wire.AddWatchPersistent && q.Mode != wire.AddWatchPersistentRecursive {
		return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrMarshallingError, nil)
	}
	return c.read(r, func(*tree.Tree) (wire.Record, error) {
		c.watchLocked(func(w *watch.Registry) {
			w.AddPersistent(q.Path, c.id, q.Mode == wire.AddWatchPersistentRecursive)
		})
		return &wire.ErrorResponse{Err: wire.CodeOK}, nil
	})
}

func (c *conn) checkOrRemoveWatches(r *reply, req wire.Record) []byte {
	var path string
	var typ wire.WatcherType
	switch q := req.(type) {
	case *wire.CheckWatchesRequest:
		path, typ = q.Path, q.Type
	case *wire.RemoveWatchesRequest:
		path, typ = q.Path, q.Type
	}
	if typ < wire.WatcherChildren || typ > wire.WatcherPersistentRecursive {
		return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrMarshallingError, nil)
	}
	s := c.srv
	s.wmu.Lock()
	var found bool
	if r.op == wire.OpCheckWatches {
		found = s.watches.Check(path, c.id, typ)
	} else {
		found = s.watches.Remove(path, c.id, typ)
	}
	s.wmu.Unlock()
	code := wire.CodeOK
	if !found {
		code = wire.ErrNoWatcher
	}
	return replyFrame(r.xid, s.lastZxid.Load(), code, nil)
}
