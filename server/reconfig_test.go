package server_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
)

// superPassword logs in as the super user of reconfigEnsemble's members.
const superPassword = "super:secret"

// reconfigEnsemble starts n members with reconfigEnabled and a super user.
func reconfigEnsemble(t *testing.T, n int, opts ...servertest.EnsembleOption) *servertest.Ensemble {
	t.Helper()
	opts = append(opts, servertest.WithMemberConfig(func(c *server.Config) {
		c.ReconfigEnabled = true
		c.SuperDigest = auth.DigestID(superPassword)
	}))
	return servertest.StartTestEnsemble(t, n, opts...)
}

// adminConn is a raw client session on one member, for reconfig.
type adminConn struct {
	t   *testing.T
	nc  net.Conn
	r   *bufio.Reader
	xid int32
}

// admin opens a session on member i, logged in as super unless
// anonymous. A member that closes the connection (it has no leader for a
// moment) is tried again, for up to 20 s.
func admin(t *testing.T, e *servertest.Ensemble, i int, anonymous bool) *adminConn {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err := tryAdmin(t, e.Addr(i), anonymous)
		if err == nil {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("session on member %d: %v", i+1, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tryAdmin(t *testing.T, addr string, anonymous bool) (*adminConn, error) {
	s, ok := dialWire(t, addr, 0, nil, false)
	if !ok || s.resp.SessionID == 0 {
		return nil, fmt.Errorf("connect to %s refused", addr)
	}
	a := &adminConn{t: t, nc: s.nc, r: s.br}
	if !anonymous {
		a.send(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte(superPassword)})
		h, _, err := a.tryRead(wire.XidAuth)
		if err != nil {
			return nil, err
		}
		if h.Err != wire.CodeOK {
			t.Fatalf("addauth super: %v", h.Err)
		}
	}
	return a, nil
}

func (a *adminConn) send(xid int32, op wire.OpCode, req wire.Record) {
	a.t.Helper()
	a.nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := a.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: xid, Type: op}, req)); err != nil {
		a.t.Fatal(err)
	}
}

// read returns the reply to xid, skipping notifications.
func (a *adminConn) read(xid int32) (wire.ReplyHeader, *wire.Decoder) {
	a.t.Helper()
	h, d, err := a.tryRead(xid)
	if err != nil {
		a.t.Fatalf("read reply %d: %v", xid, err)
	}
	return h, d
}

// tryRead is read that returns a connection error.
func (a *adminConn) tryRead(xid int32) (wire.ReplyHeader, *wire.Decoder, error) {
	for {
		frame, err := wire.ReadFrame(a.r, 0, nil)
		if err != nil {
			return wire.ReplyHeader{}, nil, err
		}
		d := wire.NewDecoder(frame, 0)
		var h wire.ReplyHeader
		h.Decode(d)
		if h.Xid == xid {
			return h, d, nil
		}
	}
}

// reconfigAcrossLoss sends req from a super session on member home until
// it is answered, as an application does: a leader change closes the
// connection (ConnectionLoss), and then /zookeeper/config tells whether
// the change was made (done says it is there).
func reconfigAcrossLoss(t *testing.T, e *servertest.Ensemble, home int, req wire.ReconfigRequest, done func(config string) bool) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		e.WaitServing(home)
		a := admin(t, e, home, false)
		a.xid++
		a.send(a.xid, wire.OpReconfig, &req)
		h, d, err := a.tryRead(a.xid)
		if err == nil {
			if h.Err != wire.CodeOK {
				t.Fatalf("reconfig %+v = %v", req, h.Err)
			}
			var resp wire.GetDataResponse
			resp.Decode(d)
			return string(resp.Data)
		}
		for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); time.Sleep(10 * time.Millisecond) {
			if e.Member(home).Serving() {
				if data, _ := configOf(t, e, home); done(data) {
					return data
				}
			}
		}
	}
	t.Fatalf("reconfig %+v: no answer", req)
	return ""
}

// reconfig sends a reconfig and returns its error code and, on success,
// the new configuration.
func (a *adminConn) reconfig(req wire.ReconfigRequest) (wire.Code, string, wire.Stat) {
	a.t.Helper()
	a.xid++
	a.send(a.xid, wire.OpReconfig, &req)
	h, d := a.read(a.xid)
	if h.Err != wire.CodeOK {
		return h.Err, "", wire.Stat{}
	}
	var resp wire.GetDataResponse
	resp.Decode(d)
	if d.Err() != nil {
		a.t.Fatalf("reconfig reply: %v", d.Err())
	}
	return h.Err, string(resp.Data), resp.Stat
}

// configOf reads /zookeeper/config on member i.
func configOf(t *testing.T, e *servertest.Ensemble, i int) (string, wire.Stat) {
	t.Helper()
	a := admin(t, e, i, true)
	a.xid++
	a.send(a.xid, wire.OpGetData, &wire.GetDataRequest{Path: "/zookeeper/config"})
	h, d := a.read(a.xid)
	if h.Err != wire.CodeOK {
		t.Fatalf("get /zookeeper/config on member %d: %v", i+1, h.Err)
	}
	var resp wire.GetDataResponse
	resp.Decode(d)
	return string(resp.Data), resp.Stat
}

// waitConfig waits until every running member in members serves want as
// /zookeeper/config.
func waitConfig(t *testing.T, e *servertest.Ensemble, want string, members ...int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, i := range members {
		for {
			got, _ := configOf(t, e, i)
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d's /zookeeper/config = %q, want %q", i+1, got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func TestReconfigRefusals(t *testing.T) {
	e := reconfigEnsemble(t, 3)
	f := e.Followers()[0]
	initial := waitVersioned(t, e, f)
	anon := admin(t, e, f, true)
	if code, _, _ := anon.reconfig(wire.ReconfigRequest{LeavingServers: "3", CurConfigID: -1}); code != wire.ErrNoAuth {
		t.Fatalf("reconfig without super = %v, want NOAUTH", code)
	}
	su := admin(t, e, f, false)
	if code, _, _ := su.reconfig(wire.ReconfigRequest{LeavingServers: "3", CurConfigID: 0x12345}); code != wire.ErrBadVersion {
		t.Fatalf("reconfig from a wrong version = %v, want BADVERSION", code)
	}
	if code, _, _ := su.reconfig(wire.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2891:3891", CurConfigID: -1}); code != wire.ErrBadArguments {
		t.Fatalf("joining server without a client port = %v, want BADARGUMENTS", code)
	}
	if code, _, _ := su.reconfig(wire.ReconfigRequest{LeavingServers: "2,3", CurConfigID: -1}); code != wire.ErrBadArguments {
		t.Fatalf("reconfig to one voter = %v, want BADARGUMENTS", code)
	}
	// Three new voters that are not running: no quorum of the new
	// membership (four of six) is in step with the leader.
	joining := "server.4=127.0.0.1:2891:3891;2191,server.5=127.0.0.1:2892:3892;2192,server.6=127.0.0.1:2893:3893;2193"
	if code, _, _ := su.reconfig(wire.ReconfigRequest{JoiningServers: joining, CurConfigID: -1}); code != wire.ErrNewConfigNoQuorum {
		t.Fatalf("reconfig without a synced quorum = %v, want NEWCONFIGNOQUORUM", code)
	}
	// Nothing changed, and a reconfig works again afterwards.
	if got, _ := configOf(t, e, f); got != initial {
		t.Fatalf("config after refusals = %q, want %q", got, initial)
	}
}

func TestReconfigDisabledByDefault(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3)
	a := admin(t, e, 0, true)
	if code, _, _ := a.reconfig(wire.ReconfigRequest{LeavingServers: "3", CurConfigID: -1}); code != wire.ErrReconfigDisabled {
		t.Fatalf("reconfig = %v, want RECONFIGDISABLED", code)
	}
}

func TestReconfigAddAndRemoveParticipant(t *testing.T) {
	e := reconfigEnsemble(t, 3)
	c := connectTo(t, e, 0, 1, 2)
	mustCreate(t, c, "/before", "1")

	j, line := e.AddMember(e.Servers(0), false)
	home := e.Followers()[0]
	su := admin(t, e, home, false)
	code, data, st := su.reconfig(wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1})
	if code != wire.CodeOK {
		t.Fatalf("reconfig add server.4 = %v", code)
	}
	if !strings.Contains(data, line) || !strings.HasSuffix(data, fmt.Sprintf("version=%x", st.Mzxid)) || st.Version != -1 {
		t.Fatalf("reconfig reply = %q %+v", data, st)
	}
	e.WaitServing(j)
	waitConfig(t, e, data, 0, 1, 2, j)
	// The new member has the data and takes part in writes.
	cj := connectTo(t, e, j)
	if got := get(t, cj, "/before"); got != "1" {
		t.Fatalf("new member reads %q", got)
	}
	mustCreate(t, cj, "/after", "2")

	// Remove a follower that is not the new member.
	var gone int
	for _, f := range e.Followers() {
		if f != j && f != home {
			gone = f
			break
		}
	}
	code, data2, _ := su.reconfig(wire.ReconfigRequest{LeavingServers: fmt.Sprint(gone + 1), CurConfigID: st.Mzxid})
	if code != wire.CodeOK || strings.Contains(data2, fmt.Sprintf("server.%d=", gone+1)) {
		t.Fatalf("reconfig remove server.%d = %v %q", gone+1, code, data2)
	}
	waitRemoved(t, e, gone)
	var rest []int
	for _, i := range e.All() {
		if i != gone {
			rest = append(rest, i)
		}
	}
	waitConfig(t, e, data2, rest...)
	// Three voters remain and a majority of them commits writes.
	mustCreate(t, cj, "/after-remove", "3")
}

// TestReconfigRemovesTheLeader removes the leader: it commits the change,
// so the reconfig's client gets its answer, as with ZooKeeper; then
// leadership moves to a member that stays. Like any leader change, that
// closes the clients' connections.
func TestReconfigRemovesTheLeader(t *testing.T) {
	e := reconfigEnsemble(t, 3)
	l := e.Leader()
	f := e.Followers()[0]
	su := admin(t, e, f, false)
	code, data, _ := su.reconfig(wire.ReconfigRequest{LeavingServers: fmt.Sprint(l + 1), CurConfigID: -1})
	if code != wire.CodeOK || strings.Contains(data, fmt.Sprintf("server.%d=", l+1)) {
		t.Fatalf("reconfig remove the leader = %v %q", code, data)
	}
	waitRemoved(t, e, l)
	nl := e.Leader()
	if nl == l {
		t.Fatalf("the removed member %d still leads", l+1)
	}
	var rest []int
	for _, i := range e.All() {
		if i != l {
			rest = append(rest, i)
		}
	}
	waitConfig(t, e, data, rest...)
	c := connectTo(t, e, nl)
	createAcrossLoss(t, c, "/x", "y")
}

func TestReconfigObserverPromotedAndDemoted(t *testing.T) {
	e := reconfigEnsemble(t, 4, servertest.WithObservers(1))
	obs := 3
	if mode := e.Member(obs).Mode(); mode != "observer" {
		t.Fatalf("member 4 is %s", mode)
	}
	su := admin(t, e, 0, false)
	line := strings.Replace(serverLine(t, e, obs), ":observer", ":participant", 1)
	if code, _, _ := su.reconfig(wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1}); code != wire.CodeOK {
		t.Fatalf("promote = %v", code)
	}
	waitMode(t, e, obs, "follower", "leader")
	line = strings.Replace(line, ":participant", ":observer", 1)
	if code, _, _ := su.reconfig(wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1}); code != wire.CodeOK {
		t.Fatalf("demote = %v", code)
	}
	waitMode(t, e, obs, "observer")
}

// serverLine returns member i's server line with its client address, as
// /zookeeper/config would give it after a reconfig.
func serverLine(t *testing.T, e *servertest.Ensemble, i int) string {
	t.Helper()
	s := e.Servers(i)[i]
	host, port, _ := net.SplitHostPort(e.Addr(i))
	role := "participant"
	if s.Observer {
		role = "observer"
	}
	return fmt.Sprintf("server.%d=%s:%d:%d:%s;%s:%s", s.ID, s.Host, s.PeerPort, s.ElectionPort, role, host, port)
}

func waitMode(t *testing.T, e *servertest.Ensemble, i int, modes ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := e.Member(i).Mode()
		for _, want := range modes {
			if m == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d is %s, want one of %v", i+1, m, modes)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRemoved waits until member i knows a reconfig removed it, and
// serves no client.
func waitRemoved(t *testing.T, e *servertest.Ensemble, i int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !e.Member(i).Removed() || e.Member(i).Serving() {
		if time.Now().After(deadline) {
			t.Fatalf("member %d was not removed", i+1)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitVersioned waits until member i's /zookeeper/config has the version
// the first leader gives the initial configuration (epoch<<32, as
// ZooKeeper's NEWLEADER zxid), its mzxid still 0, and returns it.
func waitVersioned(t *testing.T, e *servertest.Ensemble, i int) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, st := configOf(t, e, i)
		if !strings.HasSuffix(data, "version=0") {
			if !strings.HasSuffix(data, "version=100000000") || st.Mzxid != 0 || st.Version != -1 {
				t.Fatalf("initial configuration %q, stat %+v", data, st)
			}
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d's configuration has no version: %q", i+1, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// raftMatchesConfig reports whether member i's raft membership is the one
// its /zookeeper/config names.
func raftMatchesConfig(t *testing.T, e *servertest.Ensemble, i int) (bool, string) {
	t.Helper()
	data, _ := configOf(t, e, i)
	var wantV, wantO []int64
	for _, line := range strings.Split(data, "\n") {
		var id int64
		if _, err := fmt.Sscanf(line, "server.%d=", &id); err != nil {
			continue
		}
		if strings.Contains(line, ":observer") {
			wantO = append(wantO, id)
		} else {
			wantV = append(wantV, id)
		}
	}
	v, o := e.Member(i).RaftMembers()
	got := fmt.Sprint(v, o)
	return got == fmt.Sprint(wantV, wantO), fmt.Sprintf("raft %s, config %v %v", got, wantV, wantO)
}

// TestReconfigLeaderStoppedMidChange stops the leader right after a
// reconfig reaches it: the change either completes or does not. Either
// way every member's raft membership is the one its /zookeeper/config
// names, and no half-done change blocks the next reconfig.
func TestReconfigLeaderStoppedMidChange(t *testing.T) {
	for round := 0; round < 4; round++ {
		e := reconfigEnsemble(t, 3, servertest.WithSeed(uint64(round+1)))
		l := e.Leader()
		waitVersioned(t, e, l)
		j, line := e.AddMember(e.Servers(0), false)
		su := admin(t, e, l, false)
		su.xid++
		su.send(su.xid, wire.OpReconfig, &wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1})
		if round%2 == 1 {
			// Let the request reach the log before the stop.
			time.Sleep(time.Duration(round) * time.Millisecond)
		}
		e.Stop(l)
		e.Restart(l)
		e.WaitServing(0, 1, 2)
		f := e.Followers()[0]
		// A pending change is driven to its end by the new leader: ask
		// again until the answer is not "in progress".
		var code wire.Code
		for deadline := time.Now().Add(20 * time.Second); ; {
			a := admin(t, e, f, false)
			code, _, _ = a.reconfig(wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1})
			if code != wire.ErrReconfigInProgress || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if code != wire.CodeOK {
			t.Fatalf("round %d: reconfig after the leader's stop = %v", round, code)
		}
		e.WaitServing(j)
		want, _ := configOf(t, e, f)
		if !strings.Contains(want, line) {
			t.Fatalf("round %d: config %q lacks %s", round, want, line)
		}
		waitConfig(t, e, want, 0, 1, 2, j)
		for _, i := range []int{0, 1, 2, j} {
			waitRaftMatches(t, e, i)
		}
		c := connectTo(t, e, 0, 1, 2, j)
		createAcrossLoss(t, c, "/after", "x")
	}
}

// TestReconfigSurvivesRestarts restarts every member after a reconfig:
// the membership comes back from the log, not from the server lines the
// members were started with.
func TestReconfigSurvivesRestarts(t *testing.T) {
	e := reconfigEnsemble(t, 3)
	j, line := e.AddMember(e.Servers(0), false)
	data := reconfigAcrossLoss(t, e, 0, wire.ReconfigRequest{JoiningServers: line, LeavingServers: "3", CurConfigID: -1},
		func(c string) bool { return strings.Contains(c, line) && !strings.Contains(c, "server.3=") })
	waitRemoved(t, e, 2)
	for _, i := range []int{0, 1, 2, j} {
		e.Stop(i)
	}
	for _, i := range []int{0, 1, 2, j} {
		e.Restart(i)
	}
	e.WaitServing(0, 1, j)
	waitRemoved(t, e, 2)
	waitConfig(t, e, data, 0, 1, j)
	for _, i := range []int{0, 1, j} {
		waitRaftMatches(t, e, i)
	}
	c := connectTo(t, e, 0, 1, j)
	mustCreate(t, c, "/after-restart", "x")
}

// TestReconfigAddedMemberCatchesUpBySnapshot adds a member once the
// leader's log no longer starts at the beginning: it must be sent a
// snapshot that names it (one taken after its addition), or it would
// never catch up.
func TestReconfigAddedMemberCatchesUpBySnapshot(t *testing.T) {
	e := reconfigEnsemble(t, 3, servertest.WithMemberConfig(func(c *server.Config) { c.SnapCount = 10 }))
	c := connectTo(t, e, 0, 1, 2)
	for i := 0; i < 35; i++ {
		mustCreate(t, c, fmt.Sprintf("/n%d", i), "x")
	}
	j, line := e.AddMember(e.Servers(0), false)
	reconfigAcrossLoss(t, e, e.Followers()[0], wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1},
		func(cfg string) bool { return strings.Contains(cfg, line) })
	e.WaitServing(j)
	cj := connectTo(t, e, j)
	if got := get(t, cj, "/n34"); got != "x" {
		t.Fatalf("new member reads %q", got)
	}
	waitRaftMatches(t, e, j)
}

// waitRaftMatches waits until member i's raft membership is the one its
// /zookeeper/config names (a removed member is a raft learner while it
// drains).
func waitRaftMatches(t *testing.T, e *servertest.Ensemble, i int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, why := raftMatchesConfig(t, e, i)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d: %s", i+1, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReconfigMovesAClientPort gives a member another client port: it
// listens there (and no longer on the old one) while its clients stay
// connected, as ZooKeeper rebinds its client port.
func TestReconfigMovesAClientPort(t *testing.T) {
	e := reconfigEnsemble(t, 3)
	f := e.Followers()[0]
	c := connectTo(t, e, f)
	mustCreate(t, c, "/before", "x")
	old := e.Member(f).Addr().String()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	s := e.Servers(f)[f]
	line := fmt.Sprintf("server.%d=%s:%d:%d:participant;127.0.0.1:%d", s.ID, s.Host, s.PeerPort, s.ElectionPort, port)
	reconfigAcrossLoss(t, e, e.Leader(), wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1},
		func(cfg string) bool { return strings.Contains(cfg, line) })
	want := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for e.Member(f).Addr().String() != want {
		if time.Now().After(deadline) {
			t.Fatalf("member %d listens on %s, want %s", f+1, e.Member(f).Addr(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if nc, err := net.DialTimeout("tcp", old, time.Second); err == nil {
		nc.Close()
		t.Fatalf("the old client port %s still accepts", old)
	}
	if _, err := tryAdmin(t, want, true); err != nil {
		t.Fatalf("session on the new client port: %v", err)
	}
	mustCreate(t, c, "/after", "y") // the connected client stayed
}

// TestReconfigAddAndRemoveObserver adds an observer (a new member started
// as one) and removes it again.
func TestReconfigAddAndRemoveObserver(t *testing.T) {
	e := reconfigEnsemble(t, 3)
	j, line := e.AddMember(e.Servers(0), true)
	home := e.Followers()[0]
	data := reconfigAcrossLoss(t, e, home, wire.ReconfigRequest{JoiningServers: line, CurConfigID: -1},
		func(cfg string) bool { return strings.Contains(cfg, line) })
	if !strings.Contains(line, ":observer;") {
		t.Fatalf("observer line %q", line)
	}
	e.WaitServing(j)
	waitMode(t, e, j, "observer")
	waitConfig(t, e, data, 0, 1, 2, j)
	waitRaftMatches(t, e, j)
	cj := connectTo(t, e, j)
	mustCreate(t, cj, "/via-observer", "x") // forwarded to the leader
	data = reconfigAcrossLoss(t, e, home, wire.ReconfigRequest{LeavingServers: fmt.Sprint(j + 1), CurConfigID: -1},
		func(cfg string) bool { return !strings.Contains(cfg, fmt.Sprintf("server.%d=", j+1)) })
	waitRemoved(t, e, j)
	waitConfig(t, e, data, 0, 1, 2)
	for _, i := range []int{0, 1, 2} {
		waitRaftMatches(t, e, i)
	}
}
