package server

import (
	"context"
	"log/slog"
	"os"
	"os/user"
	"strings"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// Audit operation names and results, as ZooKeeper 3.6+ writes them
// (AuditConstants, AuditEvent.Result).
const (
	auditServerStart   = "serverStart"
	auditServerStop    = "serverStop"
	auditCreate        = "create"
	auditDelete        = "delete"
	auditSetData       = "setData"
	auditSetACL        = "setAcl"
	auditMulti         = "multiOperation"
	auditReconfig      = "reconfig"
	auditEphemeralGone = "ephemeralZNodeDeletionOnSessionCloseOrExpire"
	// auditAuthenticate (Warden's own, followed by ":<scheme>") is a
	// failed authentication.
	auditAuthenticate = "authenticate"

	auditSuccess = "success"
	auditFailure = "failure"
	auditInvoked = "invoked"
)

// auditor writes the audit log (docs/audit.md): one record per
// state-changing client request, written on the member the client is
// connected to once the request's result is known; one per ephemeral
// znode a closed or expired session loses, on every member (as
// ZooKeeper's DataTree logs it); and the server's start and stop.
//
// Each record is a slog record with the message "audit" and ZooKeeper's
// fields in ZooKeeper's order: session (hex), user, ip, operation, znode,
// znode_type, acl, result; fields ZooKeeper would leave out (null) are
// left out. A nil *auditor (audit.enable=false) writes nothing.
type auditor struct {
	log *slog.Logger
	// system is the user of the server's own operations: the operating
	// system user running it, as ZooKeeper uses without a JAAS principal.
	system string
}

// newAuditor returns the auditor for cfg, or nil when audit.enable is off.
// to is Options.AuditLogger; nil means log with a log=audit attribute.
func newAuditor(cfg Config, to, log *slog.Logger) *auditor {
	if !cfg.AuditEnable {
		return nil
	}
	if to == nil {
		to = log.With("log", "audit")
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return &auditor{log: to, system: name}
}

// auditEvent is one audit record's fields; empty ones are left out.
type auditEvent struct {
	session, user, ip, operation, znode, znodeType, acl, result string
}

func (a *auditor) write(ev auditEvent) {
	attrs := make([]slog.Attr, 0, 8)
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(k, v))
		}
	}
	add("session", ev.session)
	add("user", ev.user)
	add("ip", ev.ip)
	add("operation", ev.operation)
	add("znode", ev.znode)
	add("znode_type", ev.znodeType)
	add("acl", ev.acl)
	add("result", ev.result)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "audit", attrs...)
}

// server logs the server's start (success or failure) or stop (invoked:
// the stop has begun, not finished).
func (a *auditor) server(operation, result string) {
	if a == nil {
		return
	}
	a.write(auditEvent{user: a.system, operation: operation, result: result})
}

// sessionClosed logs the ephemeral znodes a closed or expired session
// lost: the deletions among the entry's changes.
func (a *auditor) sessionClosed(id fsm.SessionID, changes []tree.Change) {
	if a == nil {
		return
	}
	for _, ch := range changes {
		if ch.Type == wire.EventNodeDeleted {
			a.write(auditEvent{session: sessionHex(id), user: a.system, operation: auditEphemeralGone,
				znode: ch.Path, result: auditSuccess})
		}
	}
}

// auditUsers is ZooKeeper's user field: the user names of the
// connection's identities (the ip scheme's is the address, digest's the
// user name), comma-separated, skipping those without one.
func auditUsers(ids []wire.ID) string {
	var names []string
	for _, id := range ids {
		if n := strings.TrimSpace(auth.UserName(id.Scheme, id.ID)); n != "" {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// auditACL renders ACLs as scheme:id:perms, comma-separated.
func auditACL(acl []wire.ACL) string {
	s := make([]string, len(acl))
	for i, a := range acl {
		s[i] = a.ID.Scheme + ":" + a.ID.ID + ":" + a.Perms.Letters()
	}
	return strings.Join(s, ",")
}

// auditCreateMode is ZooKeeper's CreateMode name, lower case.
func auditCreateMode(flags int32) string {
	switch wire.CreateMode(flags) {
	case wire.ModePersistent:
		return "persistent"
	case wire.ModeEphemeral:
		return "ephemeral"
	case wire.ModePersistentSequential:
		return "persistent_sequential"
	case wire.ModeEphemeralSequential:
		return "ephemeral_sequential"
	case wire.ModeContainer:
		return "container"
	case wire.ModePersistentWithTTL:
		return "persistent_with_ttl"
	case wire.ModePersistentSequentialWithTTL:
		return "persistent_sequential_with_ttl"
	}
	return ""
}

// auditRequest describes what an audited request asked for.
type auditRequest struct {
	operation, znode, znodeType, acl string
}

// describeRequest decodes an audited op's request; ok is false for ops
// that are not audited. A body that does not decode leaves the znode out.
func describeRequest(req wire.Record) (d auditRequest, ok bool) {
	switch q := req.(type) {
	case *wire.CreateRequest:
		return auditRequest{operation: auditCreate, znode: q.Path, znodeType: auditCreateMode(q.Flags)}, true
	case *wire.CreateTTLRequest:
		return auditRequest{operation: auditCreate, znode: q.Path, znodeType: auditCreateMode(q.Flags)}, true
	case *wire.DeleteRequest:
		return auditRequest{operation: auditDelete, znode: q.Path}, true
	case *wire.DeleteContainerRequest:
		return auditRequest{operation: auditDelete, znode: q.Path}, true
	case *wire.SetDataRequest:
		return auditRequest{operation: auditSetData, znode: q.Path}, true
	case *wire.SetACLRequest:
		return auditRequest{operation: auditSetACL, znode: q.Path, acl: auditACL(q.ACL)}, true
	}
	return auditRequest{}, false
}

// request logs a client's write once its result is known, as ZooKeeper's
// AuditHelper does: one record for create, delete, setData, setAcl and
// reconfig, success or failure; for a multi that succeeded one record per
// create, delete and setData in it; for a multi that failed, one
// multiOperation failure. Other ops (closeSession, sync, ...) are not
// audited.
func (a *auditor) request(c *conn, r *reply, out fsm.Output) {
	if a == nil {
		return
	}
	base := auditEvent{session: sessionHex(c.sessionID()), user: auditUsers(r.caller.IDs), ip: c.ip}
	result := auditSuccess
	if out.Err != wire.CodeOK {
		result = auditFailure
	}
	req, _ := wire.RequestFor(r.op)
	decoded := req != nil && wire.Unmarshal(r.body, req, c.srv.maxBuffer) == nil
	switch r.op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL,
		wire.OpDelete, wire.OpDeleteContainer, wire.OpSetData, wire.OpSetACL:
		var d auditRequest
		if decoded {
			d, _ = describeRequest(req)
		}
		ev := base
		ev.operation, ev.znode, ev.znodeType, ev.acl, ev.result = auditOperation(r.op), d.znode, d.znodeType, d.acl, result
		if p := createdPath(out.Resp); p != "" {
			ev.znode = p // with its sequence suffix
		}
		a.write(ev)
	case wire.OpReconfig:
		ev := base
		ev.operation, ev.result = auditReconfig, result
		if result == auditSuccess {
			ev.znode = "/zookeeper/config"
		}
		a.write(ev)
	case wire.OpMulti:
		resp, _ := out.Resp.(*wire.MultiResponse)
		mreq, _ := req.(*wire.MultiRequest)
		if result == auditFailure || !decoded || resp == nil || len(resp.Results) != len(mreq.Ops) || multiFailed(resp) {
			ev := base
			ev.operation, ev.result = auditMulti, auditFailure
			a.write(ev)
			return
		}
		for i, op := range mreq.Ops {
			d, ok := describeRequest(op.Req)
			if !ok {
				continue // check
			}
			ev := base
			ev.operation, ev.znode, ev.znodeType, ev.result = d.operation, d.znode, d.znodeType, auditSuccess
			if p := resp.Results[i].Path; p != "" && d.operation == auditCreate {
				ev.znode = p
			}
			a.write(ev)
		}
	}
}

// auditOperation is the audit name of a single (non-multi) write op.
func auditOperation(op wire.OpCode) string {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return auditCreate
	case wire.OpDelete, wire.OpDeleteContainer:
		return auditDelete
	case wire.OpSetData:
		return auditSetData
	case wire.OpSetACL:
		return auditSetACL
	}
	return ""
}

// createdPath is the path a create reply names, or "".
func createdPath(resp wire.Record) string {
	switch r := resp.(type) {
	case *wire.CreateResponse:
		return r.Path
	case *wire.Create2Response:
		return r.Path
	}
	return ""
}

func multiFailed(resp *wire.MultiResponse) bool {
	for _, r := range resp.Results {
		if r.Type == wire.OpError {
			return true
		}
	}
	return false
}
