package status

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// srvrText writes s as a srvr reply.
func srvrText(s Srvr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Zookeeper version: %s\n", s.Version)
	if s.HasZxid {
		fmt.Fprintf(&b, "Zxid: %s\n", s.Zxid)
	}
	for _, l := range []struct {
		k string
		v int64
	}{{"Connections", s.Connections}, {"Outstanding", s.Outstanding}, {"Node count", s.Nodes}} {
		if l.v != -1 {
			fmt.Fprintf(&b, "%s: %d\n", l.k, l.v)
		}
	}
	fmt.Fprintf(&b, "Mode: %s\n", s.Mode)
	return b.String()
}

// FuzzReplies parses arbitrary srvr and mntr replies of two members, as
// `warden status` gets them from the network, and reports on them: errors
// are the documented ones, an accepted srvr reply writes back (srvrText)
// to the same Srvr, mntr keys are zk_ keys, and the table and the JSON
// report are written (the JSON valid) whatever the replies said.
func FuzzReplies(f *testing.F) {
	f.Add(srvrLeader, mntrLeader, srvrFollower, "")
	f.Add(srvrObserver, "mntr is not executed because it is not in the whitelist.\n", srvrStandalone, mntrLeader)
	f.Add(notServing, "", srvrReadOnly, "zk_server_state\tfollower\r\nzk_zxid\tx\n")
	f.Add("Mode: leader\nZxid: 0xffffffffffffffff\n", "zk_synced_followers\t-1\n", "Mode: leader\nZxid: 0x1\n", "")
	f.Fuzz(func(t *testing.T, srvr1, mntr1, srvr2, mntr2 string) {
		var members []Member
		for i, r := range [][2]string{{srvr1, mntr1}, {srvr2, mntr2}} {
			m := Member{Addr: fmt.Sprintf("m%d:2181", i)}
			m.Srvr, m.Err = ParseSrvr(r[0])
			switch {
			case m.Err == nil:
				if m.Srvr.Mode == "" {
					t.Fatalf("accepted srvr reply without a mode: %q", r[0])
				}
				back, err := ParseSrvr(srvrText(m.Srvr))
				if err != nil || back != m.Srvr {
					t.Fatalf("srvr %+v writes back as %+v, %v", m.Srvr, back, err)
				}
			case !errors.Is(m.Err, ErrNotServing) && !errors.Is(m.Err, ErrNotAllowed) && !errors.Is(m.Err, ErrBadReply):
				t.Fatalf("undocumented srvr error: %v", m.Err)
			}
			if r[1] != "" {
				m.Mntr, m.MntrErr = ParseMntr(r[1])
				if m.MntrErr != nil && !errors.Is(m.MntrErr, ErrNotServing) && !errors.Is(m.MntrErr, ErrNotAllowed) && !errors.Is(m.MntrErr, ErrBadReply) {
					t.Fatalf("undocumented mntr error: %v", m.MntrErr)
				}
				for k := range m.Mntr {
					if !strings.HasPrefix(k, "zk_") {
						t.Fatalf("mntr key %q", k)
					}
				}
			}
			members = append(members, m)
		}
		rep := Summarize(members)
		if len(rep.Rows) != len(members) {
			t.Fatalf("%d rows for %d members", len(rep.Rows), len(members))
		}
		var table, js bytes.Buffer
		if err := WriteTable(&table, rep); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(js.Bytes()) {
			t.Fatalf("invalid JSON report:\n%s", js.Bytes())
		}
	})
}
