package status

import (
	"errors"
	"strconv"
	"strings"
)

// Member is what one member said: the input of Summarize, the output of
// Check.
type Member struct {
	// Addr is the member as it was given ("host:port").
	Addr string
	// Srvr is its reply to srvr, valid when Err is nil.
	Srvr Srvr
	// Err is why srvr gave no Srvr: ErrNotServing, or the network or
	// parse error that makes the member "down".
	Err error
	// Mntr is its reply to mntr; nil when MntrErr is set (ErrNotAllowed
	// for a member that does not allow mntr) or mntr was not asked.
	Mntr    Mntr
	MntrErr error
}

// State is a member's health in one word.
type State string

const (
	// StateServing: srvr reported a mode.
	StateServing State = "serving"
	// StateNotServing: srvr answered ErrNotServing.
	StateNotServing State = "not serving"
	// StateDown: no usable answer to srvr (see Row.Error).
	StateDown State = "down"
)

// LagKind says how a member's Lag is measured.
type LagKind int

const (
	// LagNone: there is no lag to show (the member is the leader, is not
	// serving, or no single leader was found).
	LagNone LagKind = iota
	// LagTxns: same epoch as the leader; Lag.Txns transactions behind.
	LagTxns
	// LagEpochBehind: the member's last zxid is from an older epoch.
	LagEpochBehind
	// LagEpochAhead: the member's last zxid is from a newer epoch than
	// the leader's (the "leader" is stale, or they are not one ensemble).
	LagEpochAhead
)

// Lag is how far a member is behind the leader.
type Lag struct {
	Kind LagKind
	// Txns is the number of transactions behind, for LagTxns.
	Txns uint64
}

// LagOf is the lag of a member whose last zxid is member behind a leader
// whose last zxid is leader. Within an epoch, a member that seems ahead
// (it was asked a moment after the leader) has lag 0.
func LagOf(leader, member Zxid) Lag {
	switch {
	case member.Epoch() < leader.Epoch():
		return Lag{Kind: LagEpochBehind}
	case member.Epoch() > leader.Epoch():
		return Lag{Kind: LagEpochAhead}
	case member.Counter() >= leader.Counter():
		return Lag{Kind: LagTxns}
	}
	return Lag{Kind: LagTxns, Txns: uint64(leader.Counter() - member.Counter())}
}

// String is the lag as the table shows it: a number of transactions,
// "epoch behind", "epoch ahead" or "-".
func (l Lag) String() string {
	switch l.Kind {
	case LagTxns:
		return strconv.FormatUint(l.Txns, 10)
	case LagEpochBehind:
		return "epoch behind"
	case LagEpochAhead:
		return "epoch ahead"
	}
	return "-"
}

// Row is one member's line of the report.
type Row struct {
	Addr  string
	State State
	// Error is why the member is down (StateDown only).
	Error string
	// Srvr is the member's srvr reply (StateServing only).
	Srvr Srvr
	// PeerState is mntr's zk_peer_state ("following - broadcast"), ""
	// when unknown.
	PeerState string
	// Mntr reports the mntr word: "ok", "not allowed", "" when not
	// asked, or the error.
	Mntr string
	// Lag is the member's distance behind the leader.
	Lag Lag
}

// ModeText is the MODE column: the mode (with the Zab phase when it is not
// broadcast, "follower (synchronization)"), "not serving", or
// "down: <error>".
func (r Row) ModeText() string {
	switch r.State {
	case StateDown:
		return "down: " + r.Error
	case StateNotServing:
		return string(StateNotServing)
	}
	mode := string(r.Srvr.Mode)
	if _, phase, ok := strings.Cut(r.PeerState, " - "); ok && phase != "broadcast" {
		mode += " (" + phase + ")"
	}
	return mode
}

// Report is the summary of an ensemble.
type Report struct {
	// Rows are the members, in the order given.
	Rows []Row
	// Leaders are the members that say they lead (more than one: these
	// members are not one ensemble, or one of them is stale).
	Leaders []string
	// Standalone are the members in standalone mode.
	Standalone []string
	// SyncedFollowers is the leader's zk_synced_followers (mntr), -1 when
	// unknown.
	SyncedFollowers int64
	// Voters is the number of members not known to be observers;
	// ServingVoters those of them serving as leader, follower or
	// standalone.
	Voters, ServingVoters int
	// Quorum: more than half of the voters are serving.
	Quorum bool
	// OK: every member is serving (not read-only), and there is exactly
	// one leader, or a single member that is standalone. It is the exit
	// status 0 of `warden status`.
	OK bool
}

// Leader is the address of the one leader, "" when there is none or
// more than one.
func (r Report) Leader() string {
	if len(r.Leaders) == 1 {
		return r.Leaders[0]
	}
	return ""
}

// Summarize turns what the members said into a Report. The rows keep the
// order of members.
func Summarize(members []Member) Report {
	r := Report{Rows: make([]Row, len(members)), SyncedFollowers: -1}
	leader := -1
	allServing := true
	for i, m := range members {
		row := Row{Addr: m.Addr, State: StateServing}
		switch {
		case errors.Is(m.Err, ErrNotServing):
			row.State = StateNotServing
		case m.Err != nil:
			row.State, row.Error = StateDown, m.Err.Error()
		default:
			row.Srvr = m.Srvr
		}
		switch {
		case m.Mntr != nil:
			row.Mntr, row.PeerState = "ok", m.Mntr["zk_peer_state"]
		case errors.Is(m.MntrErr, ErrNotAllowed):
			row.Mntr = "not allowed"
		case m.MntrErr != nil:
			row.Mntr = m.MntrErr.Error()
		}
		mode := row.Srvr.Mode
		if row.State != StateServing || mode == ModeReadOnly {
			allServing = false
		}
		if mode != ModeObserver {
			r.Voters++
		}
		switch mode {
		case ModeLeader:
			r.Leaders = append(r.Leaders, m.Addr)
			leader = i
			r.ServingVoters++
		case ModeFollower:
			r.ServingVoters++
		case ModeStandalone:
			r.Standalone = append(r.Standalone, m.Addr)
			r.ServingVoters++
		}
		r.Rows[i] = row
	}
	if len(r.Leaders) == 1 {
		if n, ok := members[leader].Mntr.Int("zk_synced_followers"); ok {
			r.SyncedFollowers = n
		}
		if lz := members[leader].Srvr; lz.HasZxid {
			for i := range r.Rows {
				row := &r.Rows[i]
				if i != leader && row.State == StateServing && row.Srvr.HasZxid {
					row.Lag = LagOf(lz.Zxid, row.Srvr.Zxid)
				}
			}
		}
	}
	r.Quorum = r.ServingVoters*2 > r.Voters
	oneLeader := len(r.Leaders) == 1 && len(r.Standalone) == 0
	oneStandalone := len(members) == 1 && len(r.Standalone) == 1
	r.OK = allServing && (oneLeader || oneStandalone)
	return r
}
