package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// header is the table's first line; the columns are separated by two
// spaces and left aligned.
var header = []string{"ADDRESS", "MODE", "ZXID", "LAG", "CONNECTIONS", "OUTSTANDING"}

// WriteTable prints r as a table, one row per member in order, then one
// summary line:
//
//	ADDRESS        MODE      ZXID         LAG           CONNECTIONS  OUTSTANDING
//	10.0.0.1:2181  follower  0x200000005  2             3            1
//	10.0.0.2:2181  leader    0x200000007  -             2            0
//	10.0.0.3:2181  observer  0x100000009  epoch behind  1            0
//	10.0.0.4:2181  down: dial tcp 10.0.0.4:2181: connect: connection refused
//	leader 10.0.0.2:2181 (1 synced follower); quorum: yes (2 of 3 voting members serving)
//
// A member that is down has its error in place of the other columns; one
// that is not serving has "not serving" and "-" in them. "(N synced
// followers)" needs mntr on the leader.
func WriteTable(w io.Writer, r Report) error {
	cells := make([][]string, len(r.Rows))
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len(h)
	}
	for i, row := range r.Rows {
		c := rowCells(row)
		cells[i] = c
		if row.State == StateDown {
			width[0] = max(width[0], len(c[0]))
			continue
		}
		for j, s := range c {
			width[j] = max(width[j], len(s))
		}
	}
	var b strings.Builder
	writeCells(&b, header, width)
	for _, c := range cells {
		writeCells(&b, c, width)
	}
	b.WriteString(summary(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// rowCells are the table cells of row; a member that is down has two.
func rowCells(row Row) []string {
	if row.State == StateDown {
		return []string{row.Addr, row.ModeText()}
	}
	if row.State != StateServing {
		return []string{row.Addr, row.ModeText(), "-", "-", "-", "-"}
	}
	zxid := "-"
	if row.Srvr.HasZxid {
		zxid = row.Srvr.Zxid.String()
	}
	return []string{row.Addr, row.ModeText(), zxid, row.Lag.String(),
		count(row.Srvr.Connections), count(row.Srvr.Outstanding)}
}

// count is n, or "-" for an unknown (-1) count.
func count(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// writeCells writes one line, each cell but the last padded to its column.
func writeCells(b *strings.Builder, cells []string, width []int) {
	for j, s := range cells {
		b.WriteString(s)
		if j < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", width[j]-len(s)+2))
		}
	}
	b.WriteByte('\n')
}

// summary is the last line of the table: the leader, then the quorum.
func summary(r Report) string {
	var lead string
	switch {
	case len(r.Leaders) == 1:
		lead = "leader " + r.Leaders[0]
		if n := r.SyncedFollowers; n >= 0 {
			lead += " (" + plural(n, "synced follower") + ")"
		}
	case len(r.Leaders) > 1:
		lead = fmt.Sprintf("%d members say they lead: %s", len(r.Leaders), strings.Join(r.Leaders, ", "))
	case len(r.Rows) == 1 && len(r.Standalone) == 1:
		lead = "standalone " + r.Standalone[0]
	case len(r.Standalone) > 0:
		lead = "no leader (standalone: " + strings.Join(r.Standalone, ", ") + ")"
	default:
		lead = "no leader"
	}
	quorum := "no"
	if r.Quorum {
		quorum = "yes"
	}
	return fmt.Sprintf("%s; quorum: %s (%d of %d voting members serving)", lead, quorum, r.ServingVoters, r.Voters)
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// jsonReport is the JSON form of a Report (WriteJSON).
type jsonReport struct {
	Members []jsonMember `json:"members"`
	// Leader is "" when there is not exactly one.
	Leader        string   `json:"leader"`
	Leaders       []string `json:"leaders"`
	Voters        int      `json:"voters"`
	ServingVoters int      `json:"serving_voters"`
	Quorum        bool     `json:"quorum"`
	// SyncedFollowers is null when unknown (no single leader, or it does
	// not allow mntr).
	SyncedFollowers *int64 `json:"synced_followers"`
	OK              bool   `json:"ok"`
}

type jsonMember struct {
	Address   string `json:"address"`
	State     State  `json:"state"`
	Mode      Mode   `json:"mode,omitempty"`
	PeerState string `json:"peer_state,omitempty"`
	Error     string `json:"error,omitempty"`
	Version   string `json:"version,omitempty"`
	// Zxid is hexadecimal, as in srvr (a JSON number would lose the low
	// bits of a large zxid in JavaScript).
	Zxid string `json:"zxid,omitempty"`
	// Lag is the number of transactions behind the leader, null when it
	// is not counted; LagText is the table's LAG column.
	Lag         *uint64 `json:"lag"`
	LagText     string  `json:"lag_text"`
	Connections *int64  `json:"connections"`
	Outstanding *int64  `json:"outstanding"`
	Mntr        string  `json:"mntr,omitempty"`
}

// WriteJSON prints r as one line of JSON:
//
//	{"members":[{"address":"10.0.0.1:2181","state":"serving","mode":"follower",
//	  "peer_state":"following - broadcast","version":"3.8.4-...","zxid":"0x200000007",
//	  "lag":0,"lag_text":"0","connections":3,"outstanding":0,"mntr":"ok"},...],
//	 "leader":"10.0.0.2:2181","leaders":["10.0.0.2:2181"],"voters":3,
//	 "serving_voters":3,"quorum":true,"synced_followers":2,"ok":true}
//
// A member that is down has "state":"down" and "error"; counts that are
// unknown are null.
func WriteJSON(w io.Writer, r Report) error {
	out := jsonReport{
		Members:       make([]jsonMember, len(r.Rows)),
		Leader:        r.Leader(),
		Leaders:       append([]string{}, r.Leaders...),
		Voters:        r.Voters,
		ServingVoters: r.ServingVoters,
		Quorum:        r.Quorum,
		OK:            r.OK,
	}
	if r.SyncedFollowers >= 0 {
		out.SyncedFollowers = &r.SyncedFollowers
	}
	for i, row := range r.Rows {
		m := jsonMember{Address: row.Addr, State: row.State, Error: row.Error, Mntr: row.Mntr, LagText: row.Lag.String()}
		if row.State == StateServing {
			s := row.Srvr
			m.Mode, m.PeerState, m.Version = s.Mode, row.PeerState, s.Version
			if s.HasZxid {
				m.Zxid = s.Zxid.String()
			}
			if s.Connections >= 0 {
				m.Connections = &s.Connections
			}
			if s.Outstanding >= 0 {
				m.Outstanding = &s.Outstanding
			}
		}
		if row.Lag.Kind == LagTxns {
			m.Lag = &row.Lag.Txns
		}
		out.Members[i] = m
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
