package fsm

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// quotaFSM returns a state machine with /q under a quota whose limits
// text is limits, logging to the returned buffer (no timestamps).
func quotaFSM(t *testing.T, enforce bool, limits string) (*FSM, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	h := slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}})
	f := newWithSession(t, Options{EnforceQuota: enforce, Logger: slog.New(h)})
	for _, r := range []*wire.CreateRequest{
		createReq("/q", 0),
		createReq("/zookeeper/quota/q", 0),
		{Path: "/zookeeper/quota/q/zookeeper_limits", Data: []byte(limits), ACL: wire.OpenACLUnsafe},
		{Path: "/zookeeper/quota/q/zookeeper_stats", Data: []byte("count=0,bytes=0"), ACL: wire.OpenACLUnsafe},
	} {
		if out := apply(f, 1, wire.OpCreate, r); out.Err != wire.CodeOK {
			t.Fatalf("create %s: %v", r.Path, out.Err)
		}
	}
	return f, &logs
}

// at applies req as an entry proposed at time ms.
func at(f *FSM, ms int64, op wire.OpCode, req wire.Record) Output {
	return f.Apply(1, &Entry{Op: op, Session: sess, Time: ms, Body: wire.Marshal(req)})
}

// TestQuotaThroughApply checks that Options.EnforceQuota reaches the tree:
// hard limits refuse creates and setData, alone and inside a multi, and
// nothing is refused or logged without it.
func TestQuotaThroughApply(t *testing.T) {
	f, logs := quotaFSM(t, true, "count=-1,bytes=-1=;byteHardLimit=4;countHardLimit=2")
	if out := apply(f, 1, wire.OpCreate, &wire.CreateRequest{Path: "/q/a", Data: []byte("abc"), ACL: wire.OpenACLUnsafe}); out.Err != wire.CodeOK {
		t.Fatalf("create /q/a: %v", out.Err)
	}
	if out := apply(f, 1, wire.OpCreate, createReq("/q/b", 0)); out.Err != wire.ErrQuotaExceeded {
		t.Fatalf("create /q/b: %v, want QuotaExceeded", out.Err)
	}
	if out := apply(f, 1, wire.OpSetData, &wire.SetDataRequest{Path: "/q/a", Data: []byte("abcde"), Version: -1}); out.Err != wire.ErrQuotaExceeded {
		t.Fatalf("set /q/a: %v, want QuotaExceeded", out.Err)
	}
	out := apply(f, 1, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/q/a", Data: []byte("ab"), Version: -1}},
		{Type: wire.OpCreate, Req: createReq("/q/c", 0)},
	}})
	res := out.Resp.(*wire.MultiResponse).Results
	if res[0].Err != wire.CodeOK || res[1].Err != wire.ErrQuotaExceeded {
		t.Fatalf("multi results %+v, want OK then QuotaExceeded", res)
	}
	if got := logs.String(); strings.Count(got, "Quota exceeded") != 3 {
		t.Errorf("logs:\n%s", got)
	}

	f, logs = quotaFSM(t, false, "count=1,bytes=-1=;byteHardLimit=0;countHardLimit=1")
	for _, p := range []string{"/q/a", "/q/b"} {
		if out := apply(f, 1, wire.OpCreate, &wire.CreateRequest{Path: p, Data: []byte("x"), ACL: wire.OpenACLUnsafe}); out.Err != wire.CodeOK {
			t.Fatalf("create %s without enforceQuota: %v", p, out.Err)
		}
	}
	if d, _, _ := f.Tree().GetData("/zookeeper/quota/q/zookeeper_stats", tree.Caller{}); string(d) != "count=3,bytes=2" {
		t.Errorf("stats %q, want usage tracked all the same", d)
	}
	if logs.Len() != 0 {
		t.Errorf("logs without enforceQuota:\n%s", logs)
	}
}

// TestQuotaLogRate checks the warnings' rate limit (ZooKeeper's
// RateLogger, 100 ms, on the entries' times).
func TestQuotaLogRate(t *testing.T) {
	f, logs := quotaFSM(t, true, "count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=-1")
	logs.Reset()
	create := func(ms int64, p string) {
		t.Helper()
		if out := at(f, ms, wire.OpCreate, createReq(p, 0)); out.Err != wire.CodeOK {
			t.Fatalf("create %s: %v", p, out.Err)
		}
	}
	setHard := func(ms int64) {
		t.Helper()
		req := &wire.SetDataRequest{Path: "/zookeeper/quota/q/zookeeper_limits", Data: []byte("countHardLimit=3"), Version: -1}
		if out := at(f, ms, wire.OpSetData, req); out.Err != wire.CodeOK {
			t.Fatalf("set limits: %v", out.Err)
		}
	}
	refused := func(ms int64) {
		t.Helper()
		if out := at(f, ms, wire.OpCreate, createReq("/q/no", 0)); out.Err != wire.ErrQuotaExceeded {
			t.Fatalf("create /q/no: %v, want QuotaExceeded", out.Err)
		}
	}
	create(1000, "/q/a") // count 2: within the soft limit
	create(1010, "/q/b") // count 3: soft limit exceeded, logged
	setHard(1020)
	refused(1030) // a new message: logged at once
	refused(1040) // repeats within 100 ms: counted
	refused(1050)
	refused(1130)                // 100 ms after the first: the 3 repeats are logged
	refused(1140)                // counted
	create(1150, "/zookeeper/x") // no quota root: nothing, no flush
	// Raising the limit gives another message, which flushes the count.
	req := &wire.SetDataRequest{Path: "/zookeeper/quota/q/zookeeper_limits", Data: []byte("countHardLimit=2"), Version: -1}
	at(f, 1170, wire.OpSetData, req)
	refused(1180)
	want := `level=WARN msg="Quota exceeded: /q [current count=3, softCountLimit=2]" quota_root=/q limit=soft
level=WARN msg="Quota exceeded: /q [current count=4, hardCountLimit=3]" quota_root=/q limit=hard
level=WARN msg="Quota exceeded: /q [current count=4, hardCountLimit=3]" quota_root=/q limit=hard times=3
level=WARN msg="Quota exceeded: /q [current count=4, hardCountLimit=3]" quota_root=/q limit=hard times=1
level=WARN msg="Quota exceeded: /q [current count=4, hardCountLimit=2]" quota_root=/q limit=hard
`
	if got := logs.String(); got != want {
		t.Errorf("logs:\n%s\nwant:\n%s", got, want)
	}
}
