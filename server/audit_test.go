package server

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/wire"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSuffix(s.b.String(), "\n"), "\n")
}

// auditSession opens a raw session and returns it with its id.
func auditSession(t *testing.T, srv *Server) (*rawClient, fsm.SessionID) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}
	if _, err := nc.Write(wire.AppendFrame(nil, req.Encode)); err != nil {
		t.Fatal(err)
	}
	body, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resp wire.ConnectResponse
	if err := wire.Unmarshal(body, &resp, 0); err != nil || resp.SessionID == 0 {
		t.Fatalf("connect response %+v, %v", resp, err)
	}
	return &rawClient{t: t, nc: nc}, fsm.SessionID(resp.SessionID)
}

// auditScript runs a known sequence of requests, the audited ones and
// some that are not, and returns the session and the sequential node's
// path.
func auditScript(t *testing.T, srv *Server) (fsm.SessionID, string) {
	c, sid := auditSession(t, srv)
	open := wire.OpenACLUnsafe
	must := func(what string, code, want wire.Code) {
		t.Helper()
		if code != want {
			t.Fatalf("%s: %v, want %v", what, code, want)
		}
	}
	must("addauth", c.do(wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")}, nil), wire.CodeOK)
	must("create /a", c.do(wire.OpCreate, &wire.CreateRequest{Path: "/a", Data: []byte("1"), ACL: open}, &wire.CreateResponse{}), wire.CodeOK)
	must("create /e", c.do(wire.OpCreate, &wire.CreateRequest{Path: "/e", ACL: open, Flags: int32(wire.ModeEphemeral)}, &wire.CreateResponse{}), wire.CodeOK)
	var seq wire.Create2Response
	must("create2 /s-", c.do(wire.OpCreate2, &wire.CreateRequest{Path: "/s-", ACL: open, Flags: int32(wire.ModePersistentSequential)}, &seq), wire.CodeOK)
	must("get /a", c.do(wire.OpGetData, &wire.GetDataRequest{Path: "/a"}, &wire.GetDataResponse{}), wire.CodeOK)
	must("set /a", c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/a", Data: []byte("2"), Version: -1}, &wire.SetDataResponse{}), wire.CodeOK)
	must("delete /a v5", c.do(wire.OpDelete, &wire.DeleteRequest{Path: "/a", Version: 5}, nil), wire.ErrBadVersion)
	acl := []wire.ACL{{Perms: wire.PermRead | wire.PermAdmin, ID: wire.ID{Scheme: "world", ID: "anyone"}},
		{Perms: wire.PermAll, ID: wire.ID{Scheme: "ip", ID: "127.0.0.1"}}}
	must("setacl /a", c.do(wire.OpSetACL, &wire.SetACLRequest{Path: "/a", ACL: acl, Version: -1}, &wire.SetACLResponse{}), wire.CodeOK)
	must("multi", c.do(wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: &wire.CreateRequest{Path: "/m", ACL: open}},
		{Type: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: "/m", Version: 0}},
		{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/m", Data: []byte("x"), Version: -1}},
		{Type: wire.OpDelete, Req: &wire.DeleteRequest{Path: "/m", Version: -1}},
	}}, &wire.MultiResponse{}), wire.CodeOK)
	must("failed multi", c.do(wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: &wire.CreateRequest{Path: "/n", ACL: open}},
		{Type: wire.OpCreate, Req: &wire.CreateRequest{Path: "/s-", ACL: open}},
		{Type: wire.OpDelete, Req: &wire.DeleteRequest{Path: "/missing", Version: -1}},
	}}, &wire.MultiResponse{}), wire.CodeOK)
	if h, _ := c.call(wire.OpReconfig, &wire.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888;2181", CurConfigID: -1}); h.Err == wire.CodeOK {
		t.Fatal("reconfig on a standalone server without reconfigEnabled succeeded")
	}
	must("sync", c.do(wire.OpSync, &wire.SyncRequest{Path: "/"}, &wire.SyncResponse{}), wire.CodeOK)
	must("close", c.do(wire.OpCloseSession, nil, nil), wire.CodeOK)
	return sid, seq.Path
}

// auditTestLogger writes audit records to buf without time and level.
func auditTestLogger(buf *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// TestAuditLog: with audit.enable=true a known sequence of requests
// writes exactly ZooKeeper's audit records, on the server the client is
// connected to; with it off, nothing.
func TestAuditLog(t *testing.T) {
	var buf syncBuffer
	srv, _ := startServerOpts(t, func(c *Config) { c.AuditEnable = true }, Options{AuditLogger: auditTestLogger(&buf)})
	sid, seqPath := auditScript(t, srv)
	srv.Close()

	s := "session=" + sid.String() + " user=127.0.0.1,alice ip=127.0.0.1 "
	sys := srv.audit.system
	want := []string{
		"msg=audit user=" + sys + " operation=serverStart result=success",
		"msg=audit " + s + "operation=create znode=/a znode_type=persistent result=success",
		"msg=audit " + s + "operation=create znode=/e znode_type=ephemeral result=success",
		"msg=audit " + s + "operation=create znode=" + seqPath + " znode_type=persistent_sequential result=success",
		"msg=audit " + s + "operation=setData znode=/a result=success",
		"msg=audit " + s + "operation=delete znode=/a result=failure",
		"msg=audit " + s + "operation=setAcl znode=/a acl=world:anyone:ra,ip:127.0.0.1:cdrwa result=success",
		"msg=audit " + s + "operation=create znode=/m znode_type=persistent result=success",
		"msg=audit " + s + "operation=setData znode=/m result=success",
		"msg=audit " + s + "operation=delete znode=/m result=success",
		"msg=audit " + s + "operation=multiOperation result=failure",
		"msg=audit " + s + "operation=reconfig result=failure",
		"msg=audit session=" + sid.String() + " user=" + sys + " operation=ephemeralZNodeDeletionOnSessionCloseOrExpire znode=/e result=success",
		"msg=audit user=" + sys + " operation=serverStop result=invoked",
	}
	got := buf.lines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	t.Run("off", func(t *testing.T) {
		var buf syncBuffer
		srv, _ := startServerOpts(t, nil, Options{AuditLogger: slog.New(slog.NewTextHandler(&buf, nil))})
		auditScript(t, srv)
		srv.Close()
		if got := buf.lines(); len(got) != 1 || got[0] != "" {
			t.Fatalf("audit.enable=false wrote:\n%s", strings.Join(got, "\n"))
		}
	})
}

// TestAuditLogDefaultsToTheServerLog: without Options.AuditLogger the
// records go to the server's logger, marked log=audit.
func TestAuditLogDefaultsToTheServerLog(t *testing.T) {
	var buf syncBuffer
	a := newAuditor(Config{AuditEnable: true}, nil, slog.New(slog.NewTextHandler(&buf, nil)))
	a.server(auditServerStart, auditSuccess)
	if got := buf.lines(); len(got) != 1 || !strings.Contains(got[0], " msg=audit log=audit user=") ||
		!strings.HasSuffix(got[0], " operation=serverStart result=success") {
		t.Fatalf("record %q", got)
	}
	if newAuditor(Config{}, nil, slog.Default()) != nil {
		t.Fatal("audit.enable=false: an auditor")
	}
}

// TestAuditLogStartFailure: a server that cannot listen audits a failed
// serverStart.
func TestAuditLogStartFailure(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.ClientPort = busy.Addr().(*net.TCPAddr).Port
	cfg.AuditEnable = true
	var buf syncBuffer
	srv, err := Start(cfg, Options{
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		AuditLogger:   slog.New(slog.NewTextHandler(&buf, nil)),
		DisableTimers: true,
	})
	if err == nil {
		srv.Close()
		t.Fatal("started on a busy port")
	}
	if got := buf.lines(); len(got) != 1 || !strings.HasSuffix(got[0], " operation=serverStart result=failure") {
		t.Fatalf("audit log %q, want one serverStart failure", got)
	}
}
