package status

import (
	"encoding/json"
	"strings"
	"testing"
)

// mixed is an ensemble in every state a member can be in.
func mixed(t *testing.T) Report {
	return Summarize([]Member{
		member(t, "10.0.0.1:2181", srvrFollower, mntrNotAllowed),
		member(t, "10.0.0.2:2181", srvrLeader, mntrLeader),
		member(t, "zk-observer.example.com:2181", srvrObserver, mntrNotAllowed),
		member(t, "10.0.0.4:2181", notServing, ""),
		down("10.0.0.5:2181", "dial tcp 10.0.0.5:2181: connect: connection refused"),
	})
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, mixed(t)); err != nil {
		t.Fatal(err)
	}
	want := `ADDRESS                       MODE         ZXID         LAG           CONNECTIONS  OUTSTANDING
10.0.0.1:2181                 follower     0x200000005  2             3            1
10.0.0.2:2181                 leader       0x200000007  -             2            0
zk-observer.example.com:2181  observer     0x100000009  epoch behind  1            0
10.0.0.4:2181                 not serving  -            -             -            -
10.0.0.5:2181                 down: dial tcp 10.0.0.5:2181: connect: connection refused
leader 10.0.0.2:2181 (1 synced follower); quorum: no (2 of 4 voting members serving)
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTableStandalone(t *testing.T) {
	var b strings.Builder
	WriteTable(&b, Summarize([]Member{member(t, "127.0.0.1:2181", srvrStandalone, mntrNotAllowed)}))
	want := `ADDRESS         MODE        ZXID  LAG  CONNECTIONS  OUTSTANDING
127.0.0.1:2181  standalone  0x3   -    1            0
standalone 127.0.0.1:2181; quorum: yes (1 of 1 voting members serving)
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// TestSummaryLine checks the last line of the table in each situation.
func TestSummaryLine(t *testing.T) {
	cases := []struct {
		name    string
		members func(t *testing.T) []Member
		want    string
	}{
		{"leader without mntr", func(t *testing.T) []Member {
			return []Member{member(t, "a:1", srvrLeader, mntrNotAllowed), member(t, "b:1", srvrFollower, ""), down("c:1", "x")}
		}, "leader a:1; quorum: yes (2 of 3 voting members serving)"},
		{"synced followers, plural", func(t *testing.T) []Member {
			m := member(t, "a:1", srvrLeader, mntrLeader)
			m.Mntr["zk_synced_followers"] = "2"
			return []Member{m, member(t, "b:1", srvrFollower, ""), member(t, "c:1", srvrFollower, "")}
		}, "leader a:1 (2 synced followers); quorum: yes (3 of 3 voting members serving)"},
		{"no leader", func(t *testing.T) []Member {
			return []Member{member(t, "a:1", notServing, ""), down("b:1", "x"), member(t, "c:1", srvrFollower, "")}
		}, "no leader; quorum: no (1 of 3 voting members serving)"},
		{"two leaders", func(t *testing.T) []Member {
			return []Member{member(t, "a:1", srvrLeader, ""), member(t, "b:1", srvrLeader, "")}
		}, "2 members say they lead: a:1, b:1; quorum: yes (2 of 2 voting members serving)"},
		{"standalone among others", func(t *testing.T) []Member {
			return []Member{member(t, "a:1", srvrStandalone, ""), down("b:1", "x")}
		}, "no leader (standalone: a:1); quorum: no (1 of 2 voting members serving)"},
		{"single member down", func(t *testing.T) []Member {
			return []Member{down("a:1", "x")}
		}, "no leader; quorum: no (0 of 1 voting members serving)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteTable(&b, Summarize(tc.members(t)))
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if got := lines[len(lines)-1]; got != tc.want {
				t.Errorf("summary %q\nwant    %q", got, tc.want)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	var b strings.Builder
	if err := WriteJSON(&b, mixed(t)); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Errorf("not one line: %q", got)
	}
	want := `{"members":[` +
		`{"address":"10.0.0.1:2181","state":"serving","mode":"follower","version":"` + zkVersion + `","zxid":"0x200000005","lag":2,"lag_text":"2","connections":3,"outstanding":1,"mntr":"not allowed"},` +
		`{"address":"10.0.0.2:2181","state":"serving","mode":"leader","peer_state":"leading - broadcast","version":"` + zkVersion + `","zxid":"0x200000007","lag":null,"lag_text":"-","connections":2,"outstanding":0,"mntr":"ok"},` +
		`{"address":"zk-observer.example.com:2181","state":"serving","mode":"observer","version":"` + zkVersion + `","zxid":"0x100000009","lag":null,"lag_text":"epoch behind","connections":1,"outstanding":0,"mntr":"not allowed"},` +
		`{"address":"10.0.0.4:2181","state":"not serving","lag":null,"lag_text":"-","connections":null,"outstanding":null},` +
		`{"address":"10.0.0.5:2181","state":"down","error":"dial tcp 10.0.0.5:2181: connect: connection refused","lag":null,"lag_text":"-","connections":null,"outstanding":null}` +
		`],"leader":"10.0.0.2:2181","leaders":["10.0.0.2:2181"],"voters":4,"serving_voters":2,"quorum":false,"synced_followers":1,"ok":false}` + "\n"
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	// Nothing known: empty lists, not null.
	b.Reset()
	WriteJSON(&b, Summarize([]Member{down("a:1", "x")}))
	var v map[string]any
	if err := json.Unmarshal([]byte(b.String()), &v); err != nil {
		t.Fatal(err)
	}
	if l, ok := v["leaders"].([]any); !ok || len(l) != 0 || v["leader"] != "" || v["synced_followers"] != nil {
		t.Errorf("empty report: %s", b.String())
	}
}
