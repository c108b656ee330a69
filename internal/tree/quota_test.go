package tree

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/quota"
	"github.com/wardenzk/warden/wire"
)

// quotaScript drives a tree the way a client would and records a
// transcript of results and stats nodes.
type quotaScript struct {
	t    *testing.T
	tr   *Tree
	zxid int64
	out  []string
}

func newQuotaScript(t *testing.T, opts Options) *quotaScript {
	return &quotaScript{t: t, tr: New(opts)}
}

func (s *quotaScript) meta() Meta {
	s.zxid++
	return Meta{Zxid: s.zxid, Time: 1000 * s.zxid, Session: 0x42}
}

func (s *quotaScript) create(path string, data []byte) error {
	_, _, _, err := s.tr.Create(CreateOp{Path: path, Data: data, ACL: open}, anyone, s.meta())
	return err
}

func (s *quotaScript) ephemeral(path string, data []byte, session int64) error {
	m := s.meta()
	m.Session = session
	_, _, _, err := s.tr.Create(CreateOp{Path: path, Data: data, ACL: open, Kind: KindEphemeral}, anyone, m)
	return err
}

func (s *quotaScript) set(path string, data []byte) error {
	_, _, err := s.tr.SetData(path, data, -1, anyone, s.meta())
	return err
}

func (s *quotaScript) del(path string) error {
	_, err := s.tr.Delete(path, -1, anyone, s.meta())
	return err
}

// multi applies ops as one transaction, as the state machine does.
func (s *quotaScript) multi(ops ...func(m Meta) error) error {
	m := s.meta()
	s.tr.Begin()
	for _, op := range ops {
		if err := op(m); err != nil {
			s.tr.Rollback()
			return err
		}
	}
	s.tr.Commit()
	return nil
}

func (s *quotaScript) mcreate(path string, data []byte) func(Meta) error {
	return func(m Meta) error {
		_, _, _, err := s.tr.Create(CreateOp{Path: path, Data: data, ACL: open}, anyone, m)
		return err
	}
}

func (s *quotaScript) mset(path string, data []byte) func(Meta) error {
	return func(m Meta) error { _, _, err := s.tr.SetData(path, data, -1, anyone, m); return err }
}

// do records "desc -> ok" or "desc -> <error>".
func (s *quotaScript) do(desc string, err error) {
	s.t.Helper()
	res := "ok"
	if err != nil {
		res = strings.TrimPrefix(err.Error(), "zk: KeeperErrorCode = ")
	}
	s.out = append(s.out, desc+" -> "+res)
	checkInvariants(s.t, s.tr)
}

// stat records a node's data, version and data length.
func (s *quotaScript) stat(path string) {
	s.t.Helper()
	d, st, err := s.tr.GetData(path, anyone)
	if err != nil {
		s.t.Fatalf("get %s: %v", path, err)
	}
	s.out = append(s.out, fmt.Sprintf("%s b'%s' v=%d dl=%d", path, d, st.Version, st.DataLength))
}

func (s *quotaScript) check(want string) {
	s.t.Helper()
	if got := strings.Join(s.out, "\n"); got != strings.TrimSpace(want) {
		s.t.Errorf("transcript:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}

// setQuota does what zkCli's setquota does: the quota path (null data),
// then the limits node, then the stats node.
func (s *quotaScript) setQuota(path, limits string) {
	s.t.Helper()
	p := quotaPath
	for _, c := range strings.Split(path[1:], "/") {
		p += "/" + c
		if _, _, ok := s.tr.Lookup(p); !ok {
			s.do("mk "+p, s.create(p, nil))
		}
	}
	s.do("limits "+path, s.create(p+"/"+quota.LimitsNode, []byte(limits)))
	s.do("stats "+path, s.create(p+"/"+quota.StatsNode, []byte("count=0,bytes=0")))
}

// TestQuotaZkCliTranscript replays zkCli sessions against Apache ZooKeeper
// 3.8.0 (zookeeper.enforceQuota=true): `create /acl x`, `setquota -n 2
// /acl`, `listquota /acl`, and the hard limits of `setquota -N 3` and
// `setquota -B 4`.
func TestQuotaZkCliTranscript(t *testing.T) {
	s := newQuotaScript(t, Options{EnforceQuota: true})
	s.do("create /acl x", s.create("/acl", []byte("x")))
	s.setQuota("/acl", "count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=-1")
	s.stat("/zookeeper/quota/acl/zookeeper_limits")
	s.stat("/zookeeper/quota/acl/zookeeper_stats")

	s.do("create /h2", s.create("/h2", nil))
	s.setQuota("/h2", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=3")
	s.do("create /h2/a ab", s.create("/h2/a", []byte("ab")))
	s.do("create /h2/b", s.create("/h2/b", nil))
	s.do("create /h2/c", s.create("/h2/c", nil))
	s.stat("/zookeeper/quota/h2/zookeeper_stats")
	s.do("set /h2/a abcdefghij", s.set("/h2/a", []byte("abcdefghij")))
	s.do("delete /h2/b", s.del("/h2/b"))
	s.stat("/zookeeper/quota/h2/zookeeper_stats")

	s.do("create /h3 x", s.create("/h3", []byte("x")))
	s.setQuota("/h3", "count=-1,bytes=-1=;byteHardLimit=4;countHardLimit=-1")
	s.do("create /h3/a abc", s.create("/h3/a", []byte("abc")))
	s.do("create /h3/b", s.create("/h3/b", nil))
	s.do("create /h3/c", s.create("/h3/c", nil))
	s.do("set /h3/a abcd", s.set("/h3/a", []byte("abcd")))
	s.do("set /h3/a ab", s.set("/h3/a", []byte("ab")))
	s.stat("/zookeeper/quota/h3/zookeeper_stats")

	// delquota /acl: the stats and limits nodes, then the quota path.
	for _, p := range []string{"/zookeeper/quota/acl/zookeeper_stats", "/zookeeper/quota/acl/zookeeper_limits", "/zookeeper/quota/acl"} {
		s.do("delete "+p, s.del(p))
	}
	s.do("create /acl/y", s.create("/acl/y", []byte("yy")))
	s.check(`
create /acl x -> ok
mk /zookeeper/quota/acl -> ok
limits /acl -> ok
stats /acl -> ok
/zookeeper/quota/acl/zookeeper_limits b'count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=-1' v=0 dl=52
/zookeeper/quota/acl/zookeeper_stats b'count=1,bytes=1' v=0 dl=15
create /h2 -> ok
mk /zookeeper/quota/h2 -> ok
limits /h2 -> ok
stats /h2 -> ok
create /h2/a ab -> ok
create /h2/b -> ok
create /h2/c -> Quota has exceeded
/zookeeper/quota/h2/zookeeper_stats b'count=3,bytes=2' v=0 dl=15
set /h2/a abcdefghij -> ok
delete /h2/b -> ok
/zookeeper/quota/h2/zookeeper_stats b'count=2,bytes=10' v=0 dl=16
create /h3 x -> ok
mk /zookeeper/quota/h3 -> ok
limits /h3 -> ok
stats /h3 -> ok
create /h3/a abc -> ok
create /h3/b -> ok
create /h3/c -> ok
set /h3/a abcd -> Quota has exceeded
set /h3/a ab -> ok
/zookeeper/quota/h3/zookeeper_stats b'count=4,bytes=3' v=0 dl=15
delete /zookeeper/quota/acl/zookeeper_stats -> ok
delete /zookeeper/quota/acl/zookeeper_limits -> ok
delete /zookeeper/quota/acl -> ok
create /acl/y -> ok
`)
	if len(s.tr.quotaRoots) != 2 {
		t.Errorf("quota roots %v, want /h2 and /h3", s.tr.quotaRoots)
	}
}

// TestQuotaKazooTranscript replays a kazoo session against Apache
// ZooKeeper 3.8.0 (zookeeper.enforceQuota=true): multis checked against
// the committed tree, a failed multi, nested roots (the deepest wins),
// extra keys in the stats text, deleting a limits node, and ephemerals
// removed by a session close.
func TestQuotaKazooTranscript(t *testing.T) {
	s := newQuotaScript(t, Options{EnforceQuota: true})
	const q = quotaPath
	s.do("create /q", s.create("/q", []byte("x")))
	s.do("create qpath", s.create(q+"/q", nil))
	s.do("create limits", s.create(q+"/q/zookeeper_limits", []byte("count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2")))
	s.do("create stats", s.create(q+"/q/zookeeper_stats", []byte("count=0,bytes=0")))
	s.stat(q + "/q/zookeeper_stats")
	s.do("multi a b", s.multi(s.mcreate("/q/a", []byte("ab")), s.mcreate("/q/b", []byte{})))
	s.stat(q + "/q/zookeeper_stats")
	s.do("set /q/a", s.set("/q/a", []byte("abcdef")))
	s.do("multi fail", s.multi(s.mset("/q/a", []byte("1")), s.mcreate("/nope/y", []byte{})))
	s.stat(q + "/q/zookeeper_stats")
	s.do("delete /q/b", s.del("/q/b"))
	s.stat(q + "/q/zookeeper_stats")

	s.do("create /n", s.create("/n", []byte("nn")))
	s.do("create /n/in", s.create("/n/in", []byte("i")))
	for _, r := range []string{"/n", "/n/in"} {
		s.do("mk "+r, s.create(q+r, []byte{}))
		s.do("limits "+r, s.create(q+r+"/zookeeper_limits", []byte("count=10,bytes=-1")))
		s.do("stats "+r, s.create(q+r+"/zookeeper_stats", []byte("count=0,bytes=0")))
		s.stat(q + r + "/zookeeper_stats")
	}
	s.do("create /n/in/z", s.create("/n/in/z", []byte("zzz")))
	s.do("create /n/o", s.create("/n/o", []byte("oo")))
	s.stat(q + "/n/zookeeper_stats")
	s.stat(q + "/n/in/zookeeper_stats")
	s.do("set stats extra", s.set(q+"/n/zookeeper_stats", []byte("count=5,bytes=7,zeta=1;alpha=2")))
	s.do("create /n/p", s.create("/n/p", []byte("p")))
	s.stat(q + "/n/zookeeper_stats")
	s.do("delete inner limits", s.del(q+"/n/in/zookeeper_limits"))
	s.do("create /n/in/w", s.create("/n/in/w", []byte("w")))
	s.stat(q + "/n/zookeeper_stats")
	s.stat(q + "/n/in/zookeeper_stats")
	s.do("ephemeral /n/e", s.ephemeral("/n/e", []byte("eeee"), 7))
	s.stat(q + "/n/zookeeper_stats")
	s.tr.CloseSession(7, s.meta())
	s.stat(q + "/n/zookeeper_stats")
	s.check(`
create /q -> ok
create qpath -> ok
create limits -> ok
create stats -> ok
/zookeeper/quota/q/zookeeper_stats b'count=1,bytes=1' v=0 dl=15
multi a b -> ok
/zookeeper/quota/q/zookeeper_stats b'count=3,bytes=3' v=0 dl=15
set /q/a -> ok
multi fail -> NoNode
/zookeeper/quota/q/zookeeper_stats b'count=3,bytes=7' v=0 dl=15
delete /q/b -> ok
/zookeeper/quota/q/zookeeper_stats b'count=2,bytes=7' v=0 dl=15
create /n -> ok
create /n/in -> ok
mk /n -> ok
limits /n -> ok
stats /n -> ok
/zookeeper/quota/n/zookeeper_stats b'count=2,bytes=3' v=0 dl=15
mk /n/in -> ok
limits /n/in -> ok
stats /n/in -> ok
/zookeeper/quota/n/in/zookeeper_stats b'count=1,bytes=1' v=0 dl=15
create /n/in/z -> ok
create /n/o -> ok
/zookeeper/quota/n/zookeeper_stats b'count=3,bytes=5' v=0 dl=15
/zookeeper/quota/n/in/zookeeper_stats b'count=2,bytes=4' v=0 dl=15
set stats extra -> ok
create /n/p -> ok
/zookeeper/quota/n/zookeeper_stats b'count=6,bytes=8=;alpha=2;zeta=1' v=1 dl=31
delete inner limits -> ok
create /n/in/w -> ok
/zookeeper/quota/n/zookeeper_stats b'count=7,bytes=9=;alpha=2;zeta=1' v=1 dl=31
/zookeeper/quota/n/in/zookeeper_stats b'count=2,bytes=4' v=0 dl=15
ephemeral /n/e -> ok
/zookeeper/quota/n/zookeeper_stats b'count=8,bytes=13=;alpha=2;zeta=1' v=1 dl=32
/zookeeper/quota/n/zookeeper_stats b'count=7,bytes=9=;alpha=2;zeta=1' v=1 dl=31
`)
}

// TestQuotaStatsInPlace checks that quota updates leave the stats node's
// stat alone, fire no watch, and that create and setData report the stat
// from before their own quota update.
func TestQuotaStatsInPlace(t *testing.T) {
	s := newQuotaScript(t, Options{})
	s.create("/r", []byte("abc"))
	s.create(quotaPath+"/r", nil)
	s.create(quotaPath+"/r/zookeeper_limits", []byte("count=5"))
	_, st, ch, err := s.tr.Create(CreateOp{Path: quotaPath + "/r/zookeeper_stats", Data: []byte("c"), ACL: open}, anyone, s.meta())
	if err != nil {
		t.Fatal(err)
	}
	if st.DataLength != 1 {
		t.Errorf("create returned dataLength %d, want 1 (the data given)", st.DataLength)
	}
	if len(ch) != 2 {
		t.Errorf("create of the stats node fired %d triggers, want 2", len(ch))
	}
	before, _, _ := s.tr.Lookup(quotaPath + "/r/zookeeper_stats")
	_, ch, err = s.tr.SetData("/r", []byte("abcdef"), -1, anyone, s.meta())
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 1 || ch[0].Path != "/r" {
		t.Errorf("setData triggers %+v, want only /r's NodeDataChanged", ch)
	}
	d, after, _ := s.tr.GetData(quotaPath+"/r/zookeeper_stats", anyone)
	if string(d) != "count=1,bytes=6" {
		t.Errorf("stats %q", d)
	}
	before.DataLength = after.DataLength
	if before != after {
		t.Errorf("stats stat changed: %+v → %+v", before, after)
	}
}

// TestQuotaEdges covers quota nodes in odd places and quota text that
// ZooKeeper cannot parse.
func TestQuotaEdges(t *testing.T) {
	t.Run("stats directly under /zookeeper/quota counts the whole tree", func(t *testing.T) {
		s := newQuotaScript(t, Options{})
		s.create("/a", []byte("12"))
		s.do("limits", s.create(quotaPath+"/zookeeper_limits", []byte("count=1")))
		s.do("stats", s.create(quotaPath+"/zookeeper_stats", []byte("xyz")))
		// "/", "/zookeeper", quota, config, /a, limits, stats.
		s.stat(quotaPath + "/zookeeper_stats")
		s.do("create /b", s.create("/b", []byte("bb")))
		s.stat(quotaPath + "/zookeeper_stats")
		s.check(`
limits -> ok
stats -> ok
/zookeeper/quota/zookeeper_stats b'count=7,bytes=12' v=0 dl=16
create /b -> ok
/zookeeper/quota/zookeeper_stats b'count=7,bytes=12' v=0 dl=16
`)
		if len(s.tr.quotaRoots) != 0 {
			t.Errorf("roots %v, want none", s.tr.quotaRoots)
		}
	})
	t.Run("a string prefix of /zookeeper/quota registers the rest", func(t *testing.T) {
		s := newQuotaScript(t, Options{})
		s.create("/zookeeper/quotax", nil)
		s.create("/zookeeper/quotax/zookeeper_limits", []byte("count=1"))
		s.do("stats", s.create("/zookeeper/quotax/zookeeper_stats", nil))
		s.stat("/zookeeper/quotax/zookeeper_stats")
		if _, ok := s.tr.quotaRoots["/x"]; !ok || len(s.tr.quotaRoots) != 1 {
			t.Errorf("roots %v, want /x", s.tr.quotaRoots)
		}
		s.do("delete limits", s.del("/zookeeper/quotax/zookeeper_limits"))
		if len(s.tr.quotaRoots) != 0 {
			t.Errorf("roots %v, want none", s.tr.quotaRoots)
		}
		s.check(`
stats -> ok
/zookeeper/quotax/zookeeper_stats b'count=0,bytes=0' v=0 dl=15
delete limits -> ok
`)
	})
	t.Run("unparseable stats are left alone or refused", func(t *testing.T) {
		s := newQuotaScript(t, Options{EnforceQuota: true})
		s.create("/r", nil)
		s.create(quotaPath+"/r", nil)
		s.create(quotaPath+"/r/zookeeper_limits", []byte("countHardLimit=9"))
		s.create(quotaPath+"/r/zookeeper_stats", nil)
		s.do("set stats", s.set(quotaPath+"/r/zookeeper_stats", []byte("count=x")))
		s.do("create /r/a", s.create("/r/a", nil))
		s.do("set limits", s.set(quotaPath+"/r/zookeeper_limits", []byte("countHardLimit")))
		s.do("create /r/b", s.create("/r/b", nil))
		s.do("set limits", s.set(quotaPath+"/r/zookeeper_limits", []byte("byteHardLimit=1")))
		s.do("create /r/c", s.create("/r/c", nil))
		s.stat(quotaPath + "/r/zookeeper_stats")
		s.check(`
set stats -> ok
create /r/a -> MarshallingError
set limits -> ok
create /r/b -> MarshallingError
set limits -> ok
create /r/c -> ok
/zookeeper/quota/r/zookeeper_stats b'count=x' v=1 dl=7
`)
	})
}

// TestQuotaEnforcement is checkQuota's decision table.
func TestQuotaEnforcement(t *testing.T) {
	tests := []struct {
		name, limits string
		enforce      bool
		op           func(s *quotaScript) error
		want         error
	}{
		{"count hard exceeded", "countHardLimit=2", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, wire.ErrQuotaExceeded},
		{"count hard reached", "countHardLimit=3", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil},
		{"count soft only", "count=1", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil},
		{"not enforced", "countHardLimit=1", false, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil},
		{"hard beats soft", "count=1,bytes=-1=;countHardLimit=5", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil},
		{"bytes hard on create", "byteHardLimit=4", true, func(s *quotaScript) error { return s.create("/r/b", []byte("xyz")) }, wire.ErrQuotaExceeded},
		{"bytes hard on set", "byteHardLimit=4", true, func(s *quotaScript) error { return s.set("/r/a", []byte("12345")) }, wire.ErrQuotaExceeded},
		{"bytes hard shrink", "byteHardLimit=0", true, func(s *quotaScript) error { return s.set("/r/a", []byte("")) }, nil},
		{"bytes unchanged skip check", "byteHardLimit=0", true, func(s *quotaScript) error { return s.set("/r/a", []byte("ab")) }, nil},
		{"quota beats bad version", "byteHardLimit=2", true, func(s *quotaScript) error {
			_, _, err := s.tr.SetData("/r/a", []byte("abc"), 7, anyone, s.meta())
			return err
		}, wire.ErrQuotaExceeded},
		{"no auth beats quota", "byteHardLimit=2", true, func(s *quotaScript) error {
			_, err := s.tr.SetACL("/r/a", wire.ReadACLUnsafe, -1, anyone, s.meta())
			if err != nil {
				return err
			}
			return s.set("/r/a", []byte("abc"))
		}, wire.ErrNoAuth},
		{"node exists beats quota", "countHardLimit=1", true, func(s *quotaScript) error { return s.create("/r/a", nil) }, wire.ErrNodeExists},
		{"deepest root only", "countHardLimit=2", true, func(s *quotaScript) error {
			s.setQuota("/r/a", "count=-1")
			return s.create("/r/a/x", nil)
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newQuotaScript(t, Options{EnforceQuota: tc.enforce})
			s.create("/r", nil)
			s.create("/r/a", []byte("ab"))
			s.setQuota("/r", tc.limits)
			if err := tc.op(s); err != tc.want {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			checkInvariants(t, s.tr)
		})
	}
}

// TestQuotaMultiChecksCommittedTree: inside a multi, checks read the tree
// as it was at Begin, for roots, limits and stats alike.
func TestQuotaMultiChecksCommittedTree(t *testing.T) {
	s := newQuotaScript(t, Options{EnforceQuota: true})
	s.create("/r", nil)
	// A root created inside the multi is not enforced by that multi.
	s.do("multi setquota+create", s.multi(
		s.mcreate(quotaPath+"/r", nil),
		s.mcreate(quotaPath+"/r/zookeeper_limits", []byte("countHardLimit=1")),
		s.mcreate(quotaPath+"/r/zookeeper_stats", nil),
		s.mcreate("/r/a", nil)))
	s.stat(quotaPath + "/r/zookeeper_stats")
	s.do("create /r/b", s.create("/r/b", nil))
	// Raising the limit inside the multi does not help that multi.
	s.do("multi raise+create", s.multi(
		s.mset(quotaPath+"/r/zookeeper_limits", []byte("countHardLimit=5")),
		s.mcreate("/r/b", nil)))
	s.do("set limits 3", s.set(quotaPath+"/r/zookeeper_limits", []byte("countHardLimit=3")))
	s.do("create /r/b", s.create("/r/b", nil))
	// Dropping the limits inside the multi does not help either.
	s.do("multi delquota+create", s.multi(
		func(m Meta) error { _, err := s.tr.Delete(quotaPath+"/r/zookeeper_limits", -1, anyone, m); return err },
		s.mcreate("/r/c", nil)))
	s.stat(quotaPath + "/r/zookeeper_stats")
	s.check(`
multi setquota+create -> ok
/zookeeper/quota/r/zookeeper_stats b'count=2,bytes=0' v=0 dl=15
create /r/b -> Quota has exceeded
multi raise+create -> Quota has exceeded
set limits 3 -> ok
create /r/b -> ok
multi delquota+create -> Quota has exceeded
/zookeeper/quota/r/zookeeper_stats b'count=3,bytes=0' v=0 dl=15
`)
}

// TestQuotaExceededReports checks what the quota check reports for
// logging, as ZooKeeperServer.checkQuota logs it: the hard limit of a
// measure when there is one, else the soft one; the count before the
// bytes; nothing without EnforceQuota; and reports survive a rollback.
func TestQuotaExceededReports(t *testing.T) {
	tests := []struct {
		name, limits string
		enforce      bool
		op           func(s *quotaScript) error
		wantErr      error
		want         []string
	}{
		{"soft count", "count=2", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil,
			[]string{"Quota exceeded: /r [current count=3, softCountLimit=2]"}},
		{"hard count", "countHardLimit=2", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, wire.ErrQuotaExceeded,
			[]string{"Quota exceeded: /r [current count=3, hardCountLimit=2]"}},
		{"hard count set, soft passed, no report", "count=1,bytes=-1=;countHardLimit=5", true, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil, nil},
		{"soft bytes on set", "bytes=3", true, func(s *quotaScript) error { return s.set("/r/a", []byte("abcd")) }, nil,
			[]string{"Quota exceeded: /r [current bytes=4, softByteLimit=3]"}},
		{"hard bytes on create", "byteHardLimit=3", true, func(s *quotaScript) error { return s.create("/r/b", []byte("xy")) }, wire.ErrQuotaExceeded,
			[]string{"Quota exceeded: /r [current bytes=4, hardByteLimit=3]"}},
		{"soft count then hard bytes", "count=1,bytes=-1=;byteHardLimit=2", true, func(s *quotaScript) error { return s.create("/r/b", []byte("x")) }, wire.ErrQuotaExceeded,
			[]string{"Quota exceeded: /r [current count=3, softCountLimit=1]", "Quota exceeded: /r [current bytes=3, hardByteLimit=2]"}},
		{"hard count stops before bytes", "countHardLimit=1,byteHardLimit=0", true, func(s *quotaScript) error { return s.create("/r/b", []byte("x")) }, wire.ErrQuotaExceeded,
			[]string{"Quota exceeded: /r [current count=3, hardCountLimit=1]"}},
		{"delete never checked", "countHardLimit=1,byteHardLimit=0", true, func(s *quotaScript) error { return s.del("/r/a") }, nil, nil},
		{"not enforced, no report", "count=1,countHardLimit=1", false, func(s *quotaScript) error { return s.create("/r/b", nil) }, nil, nil},
		{"rolled-back multi keeps its report", "count=2", true, func(s *quotaScript) error {
			return s.multi(s.mcreate("/r/b", nil), s.mcreate("/nope/x", nil))
		}, wire.ErrNoNode, []string{"Quota exceeded: /r [current count=3, softCountLimit=2]"}},
		{"deepest root's hard limit wins over a looser parent", "countHardLimit=100", true, func(s *quotaScript) error {
			s.setQuota("/r/a", "countHardLimit=1")
			s.tr.TakeQuotaExceeded()
			return s.create("/r/a/x", nil)
		}, wire.ErrQuotaExceeded, []string{"Quota exceeded: /r/a [current count=2, hardCountLimit=1]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newQuotaScript(t, Options{EnforceQuota: tc.enforce})
			s.create("/r", nil)
			s.create("/r/a", []byte("ab"))
			s.setQuota("/r", tc.limits)
			if got := s.tr.TakeQuotaExceeded(); len(got) != 0 {
				t.Fatalf("reports before the op: %v", got)
			}
			if err := tc.op(s); err != tc.wantErr {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			var got []string
			for _, q := range s.tr.TakeQuotaExceeded() {
				got = append(got, q.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("reports\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if again := s.tr.TakeQuotaExceeded(); len(again) != 0 {
				t.Errorf("reports not forgotten: %v", again)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		s := newQuotaScript(t, Options{EnforceQuota: true})
		s.create("/r", nil)
		s.setQuota("/r", "countHardLimit=1")
		for range maxQuotaExceeded + 10 {
			if err := s.create("/r/x", nil); err != wire.ErrQuotaExceeded {
				t.Fatal(err)
			}
		}
		if n := len(s.tr.TakeQuotaExceeded()); n != maxQuotaExceeded {
			t.Errorf("%d reports kept, want %d", n, maxQuotaExceeded)
		}
	})
}

// TestQuotaRootNames covers the names ZooKeeper's PathTrie treats
// specially: components all of white space are left out, and deleting a
// zookeeper_limits node under any parent starting with "/zookeeper"
// unregisters that parent minus its first 16 bytes.
func TestQuotaRootNames(t *testing.T) {
	t.Run("blank component", func(t *testing.T) {
		s := newQuotaScript(t, Options{EnforceQuota: true})
		for _, p := range []string{"/a", "/a/ ", "/a/ /b", "/a/b", quotaPath + "/a", quotaPath + "/a/ "} {
			s.create(p, nil)
		}
		s.do("limits on /a/ ", s.create(quotaPath+"/a/ /"+quota.LimitsNode, []byte("countHardLimit=9")))
		if _, ok := s.tr.quotaRoots["/a"]; !ok || len(s.tr.quotaRoots) != 1 {
			t.Fatalf("roots %v, want /a", s.tr.quotaRoots)
		}
		s.do("delete it", s.del(quotaPath+"/a/ /"+quota.LimitsNode))
		if len(s.tr.quotaRoots) != 0 {
			t.Fatalf("roots %v, want none", s.tr.quotaRoots)
		}
		// "/a/ /b/x" is under the root /a/b for ZooKeeper.
		s.setQuota("/a/b", "countHardLimit=2")
		s.do("create /a/ /b/x", s.create("/a/ /b/x", []byte("xx")))
		s.stat(quotaPath + "/a/b/" + quota.StatsNode)
		s.do("create /a/ /b/y", s.create("/a/ /b/y", nil))
		s.do("create /a/b/z", s.create("/a/b/z", nil))
		s.check(`
limits on /a/  -> ok
delete it -> ok
mk /zookeeper/quota/a/b -> ok
limits /a/b -> ok
stats /a/b -> ok
create /a/ /b/x -> ok
/zookeeper/quota/a/b/zookeeper_stats b'count=2,bytes=2' v=0 dl=15
create /a/ /b/y -> Quota has exceeded
create /a/b/z -> Quota has exceeded
`)
	})
	t.Run("limits deleted under /zookeeper", func(t *testing.T) {
		s := newQuotaScript(t, Options{})
		s.create("/fgh", nil)
		s.setQuota("/fgh", "count=5")
		s.create("/zookeeper/abcdefgh", nil)
		s.create("/zookeeper/abcdefgh/"+quota.LimitsNode, nil)
		s.create("/zookeeper/x", nil)
		s.create("/zookeeper/x/"+quota.LimitsNode, nil)
		s.do("delete short", s.del("/zookeeper/x/"+quota.LimitsNode))
		if _, ok := s.tr.quotaRoots["/fgh"]; !ok {
			t.Fatalf("roots %v, want /fgh still", s.tr.quotaRoots)
		}
		s.do("delete long", s.del("/zookeeper/abcdefgh/"+quota.LimitsNode))
		if len(s.tr.quotaRoots) != 0 {
			t.Fatalf("roots %v, want none", s.tr.quotaRoots)
		}
	})
}
