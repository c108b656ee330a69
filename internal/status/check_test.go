package status

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake4lw is a four-letter-word server on 127.0.0.1:0: it reads the word
// and answers with the canned reply (ZooKeeper's refusal for a word it has
// none for), then closes the connection, as ZooKeeper does. A silent one
// reads the word and never answers. It is closed when the test ends.
type fake4lw struct {
	ln      net.Listener
	replies map[string]string
	silent  bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	asked   []string // words received, in order
}

func startFake(t *testing.T, replies map[string]string, silent bool) *fake4lw {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fake4lw{ln: ln, replies: replies, silent: silent}
	f.wg.Go(f.serve)
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *fake4lw) addr() string { return f.ln.Addr().String() }

func (f *fake4lw) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Go(func() { f.answer(c) })
	}
}

func (f *fake4lw) answer(c net.Conn) {
	c.SetDeadline(time.Now().Add(10 * time.Second)) // bounds a stuck test
	word := make([]byte, 4)
	if _, err := io.ReadFull(c, word); err != nil {
		c.Close()
		return
	}
	f.mu.Lock()
	f.asked = append(f.asked, string(word))
	f.mu.Unlock()
	if f.silent {
		return // closed by the cleanup
	}
	reply, ok := f.replies[string(word)]
	if !ok {
		reply = string(word) + " is not executed because it is not in the whitelist.\n"
	}
	io.WriteString(c, reply)
	c.Close()
}

func (f *fake4lw) words() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// refusedAddr is a loopback address nobody listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestCheckEndToEnd asks fake members in every state and prints the
// table: a follower with ZooKeeper's default whitelist (srvr only), a
// leader that allows mntr, one still electing, one that is not there, and
// one that never answers.
func TestCheckEndToEnd(t *testing.T) {
	follower := startFake(t, map[string]string{"srvr": srvrFollower}, false)
	leader := startFake(t, map[string]string{"srvr": srvrLeader, "mntr": mntrLeader}, false)
	electing := startFake(t, map[string]string{"srvr": notServing, "mntr": notServing}, false)
	gone := refusedAddr(t)
	silent := startFake(t, nil, true)

	cfg := Config{
		Members: []string{follower.addr(), leader.addr(), electing.addr(), gone, silent.addr()},
		Timeout: 300 * time.Millisecond,
	}
	start := time.Now()
	members, err := Check(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Check took %v with a 300ms timeout per member", d)
	}
	var b strings.Builder
	r := Summarize(members)
	WriteTable(&b, r)
	// The addresses are random ports: name them, and make the column
	// padding (which depends on their length) two spaces.
	got := strings.NewReplacer(follower.addr(), "follower:1", leader.addr(), "leader:2",
		electing.addr(), "electing:3", gone, "gone:4", silent.addr(), "silent:5").Replace(b.String())
	got = regexp.MustCompile(` {2,}`).ReplaceAllString(got, "  ")
	want := `ADDRESS  MODE  ZXID  LAG  CONNECTIONS  OUTSTANDING
follower:1  follower  0x200000005  2  3  1
leader:2  leader  0x200000007  -  2  0
electing:3  not serving  -  -  -  -
gone:4  down: dial tcp gone:4: connect: connection refused
silent:5  down: no answer within 300ms
leader leader:2 (1 synced follower); quorum: no (2 of 5 voting members serving)
`
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if r.OK {
		t.Error("OK with members down")
	}
	// srvr first; mntr only for members that serve.
	for _, c := range []struct {
		f    *fake4lw
		want []string
	}{{follower, []string{"srvr", "mntr"}}, {leader, []string{"srvr", "mntr"}}, {electing, []string{"srvr"}}, {silent, []string{"srvr"}}} {
		if got := c.f.words(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s was asked %v, want %v", c.f.addr(), got, c.want)
		}
	}
	if !errors.Is(members[0].MntrErr, ErrNotAllowed) || members[1].Mntr == nil {
		t.Errorf("mntr: follower %v, leader %v", members[0].MntrErr, members[1].Mntr)
	}
}

// TestCheckHealthy is the exit status 0 case: every member answers, one
// leads.
func TestCheckHealthy(t *testing.T) {
	var addrs []string
	for _, srvr := range []string{srvrLeader, srvrFollower, srvrFollower} {
		addrs = append(addrs, startFake(t, map[string]string{"srvr": srvr}, false).addr())
	}
	members, err := Check(context.Background(), Config{Members: addrs, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r := Summarize(members); !r.OK || !r.Quorum || r.Leader() != addrs[0] {
		t.Errorf("healthy ensemble: ok %v quorum %v leader %q", r.OK, r.Quorum, r.Leader())
	}
}

// TestCheckCancel: cancelling the context ends the questions at once.
func TestCheckCancel(t *testing.T) {
	silent := startFake(t, nil, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []Member, 1)
	go func() {
		m, _ := Check(ctx, Config{Members: []string{silent.addr()}, Timeout: time.Minute})
		done <- m
	}()
	for deadline := time.Now().Add(5 * time.Second); len(silent.words()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the member was never asked")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case m := <-done:
		if m[0].Err == nil || m[0].Err.Error() != "interrupted" {
			t.Errorf("error %v, want interrupted", m[0].Err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Check did not return after cancel")
	}
}

func TestParseMembers(t *testing.T) {
	cases := []struct {
		args []string
		want []string
		err  string
	}{
		{[]string{"a:2181,b:2182", "c:2183"}, []string{"a:2181", "b:2182", "c:2183"}, ""},
		{[]string{"zk1,zk2:2182/app"}, []string{"zk1:2181", "zk2:2182"}, ""},
		{[]string{"[::1]:2181", "[::1]"}, []string{"[::1]:2181", "[::1]:2181"}, ""},
		{[]string{"::1"}, nil, "write an IPv6 address as [addr]:port"},
		{[]string{"a:2181,,b"}, nil, "empty member"},
		{[]string{"a:"}, nil, "has no port"},
		{nil, nil, "no members"},
	}
	for _, tc := range cases {
		got, err := ParseMembers(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMembers(%q) error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseMembers(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {Members: []string{"a"}}, {Members: []string{"a:1"}, Timeout: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v is valid", c)
		}
	}
	if err := (Config{Members: []string{"a:1"}}).Validate(); err != nil {
		t.Error(err)
	}
}
