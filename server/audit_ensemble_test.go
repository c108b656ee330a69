package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
)

// lockedBuffer is a bytes.Buffer the members may write concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// audit returns the audit records written so far whose text contains
// every one of parts.
func (l *lockedBuffer) audit(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.b.String()) {
		if !strings.Contains(line, " msg=audit ") {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// TestEnsembleAuditsOnTheClientsMember: a client's write is audited only
// by the member the client is connected to, as ZooKeeper audits it; the
// ephemeral deletions of a closed session by every member, as ZooKeeper's
// DataTree logs them.
func TestEnsembleAuditsOnTheClientsMember(t *testing.T) {
	var buf lockedBuffer
	e := servertest.StartTestEnsemble(t, 3,
		servertest.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))),
		servertest.WithMemberConfig(func(c *server.Config) { c.AuditEnable = true }))
	if got := buf.audit("operation=serverStart result=success"); len(got) != 3 {
		t.Fatalf("serverStart records: %q, want one per member", got)
	}
	f := e.Followers()[0]
	nc, sid, _ := rawSession(t, e.Addr(f), 0, nil)
	if code := rawCreateEphemeral(t, nc, "/eph"); code != wire.CodeOK {
		t.Fatalf("create: %v", code)
	}
	e.WaitApplied()
	got := buf.audit("operation=create")
	want := fmt.Sprintf("myid=%d log=audit session=%#x ", f+1, uint64(sid))
	if len(got) != 1 || !strings.Contains(got[0], want) || !strings.HasSuffix(got[0], " ip=127.0.0.1 operation=create znode=/eph znode_type=ephemeral result=success") {
		t.Fatalf("create records: %q, want one from member %d (%q)", got, f+1, want)
	}

	// closeSession (xid 2): its reply comes once it is applied here.
	if _, err := nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: 2, Type: wire.OpCloseSession})); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.ReadFrame(bufio.NewReader(nc), 0, nil); err != nil {
		t.Fatal(err)
	}
	e.WaitApplied()
	sess := fmt.Sprintf("session=%#x ", uint64(sid))
	if got := buf.audit(sess, "operation=ephemeralZNodeDeletionOnSessionCloseOrExpire znode=/eph result=success"); len(got) != 3 {
		t.Fatalf("ephemeral deletion records: %q, want one per member", got)
	}
}
