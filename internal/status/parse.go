package status

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors of the parsers. A reply that is a refusal is one of the first
// two; any other unusable reply wraps ErrBadReply.
var (
	// ErrNotServing is the reply of a member that is up but not serving
	// clients: a quorum member still electing or syncing, or one without
	// a quorum.
	ErrNotServing = errors.New("status: not currently serving requests")
	// ErrNotAllowed is the reply to a word missing from the member's
	// 4lw.commands.whitelist.
	ErrNotAllowed = errors.New("status: not in the server's 4lw.commands.whitelist")
	// ErrBadReply is a reply that is neither a refusal nor the word's
	// output (another service on the port, 4lw switched off, a truncated
	// answer).
	ErrBadReply = errors.New("status: unexpected reply")
)

// notServingText is ZooKeeper's ZK_NOT_SERVING; notAllowedSuffix ends the
// reply to a word that is not whitelisted ("mntr is not executed ...").
const (
	notServingText   = "This ZooKeeper instance is not currently serving requests"
	notAllowedSuffix = "is not executed because it is not in the whitelist."
)

// Zxid is a ZooKeeper transaction id: the epoch in the high 32 bits, a
// counter within the epoch in the low 32 bits.
type Zxid uint64

// Epoch is the leader epoch the transaction belongs to.
func (z Zxid) Epoch() uint32 { return uint32(z >> 32) }

// Counter is the transaction's number within its epoch.
func (z Zxid) Counter() uint32 { return uint32(z) }

// String is the zxid as ZooKeeper prints it: 0x, lower-case hex, no
// leading zeros.
func (z Zxid) String() string { return "0x" + strconv.FormatUint(uint64(z), 16) }

// Mode is a member's role as srvr's "Mode:" line names it.
type Mode string

// The modes ZooKeeper reports. Others are kept as they are.
const (
	ModeStandalone Mode = "standalone"
	ModeLeader     Mode = "leader"
	ModeFollower   Mode = "follower"
	ModeObserver   Mode = "observer"
	// ModeReadOnly is a member cut off from its quorum that serves
	// read-only clients (readonlymode.enabled).
	ModeReadOnly Mode = "read-only"
)

// Srvr is what a member says in reply to srvr.
type Srvr struct {
	// Version is the "Zookeeper version:" line without its label.
	Version string
	Mode    Mode
	// Zxid is the last transaction the member applied; HasZxid is false
	// when the line is missing.
	Zxid    Zxid
	HasZxid bool
	// Connections, Outstanding and Nodes are the "Connections:",
	// "Outstanding:" (requests queued, not yet answered) and "Node count:"
	// lines; -1 when missing.
	Connections, Outstanding, Nodes int64
}

// ParseSrvr reads the reply to srvr. A member that is not serving yields
// ErrNotServing; a reply without a Mode line wraps ErrBadReply.
func ParseSrvr(text string) (Srvr, error) {
	if err := refusal(text); err != nil {
		return Srvr{}, err
	}
	s := Srvr{Connections: -1, Outstanding: -1, Nodes: -1}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ": ")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var err error
		switch k {
		case "Zookeeper version":
			s.Version = v
		case "Mode":
			s.Mode = Mode(v)
		case "Zxid":
			var z uint64
			z, err = strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
			s.Zxid, s.HasZxid = Zxid(z), err == nil
		case "Connections":
			s.Connections, err = strconv.ParseInt(v, 10, 64)
		case "Outstanding":
			s.Outstanding, err = strconv.ParseInt(v, 10, 64)
		case "Node count":
			s.Nodes, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return Srvr{}, fmt.Errorf("%w: srvr line %q", ErrBadReply, line)
		}
	}
	if s.Mode == "" {
		return Srvr{}, fmt.Errorf("%w to srvr: no Mode line in %q", ErrBadReply, firstLine(text))
	}
	return s, nil
}

// Mntr is the reply to mntr: value by key ("zk_server_state").
type Mntr map[string]string

// Int returns the integer value of key; ok is false when it is missing or
// not an integer.
func (m Mntr) Int(key string) (n int64, ok bool) {
	v, found := m[key]
	if !found {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// ParseMntr reads the reply to mntr. A member that is not serving yields
// ErrNotServing, one whose whitelist lacks mntr ErrNotAllowed.
func ParseMntr(text string) (Mntr, error) {
	if err := refusal(text); err != nil {
		return nil, err
	}
	m := Mntr{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
		if ok && strings.HasPrefix(k, "zk_") {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%w to mntr: %q", ErrBadReply, firstLine(text))
	}
	return m, nil
}

// refusal recognises the replies that refuse a word.
func refusal(text string) error {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return fmt.Errorf("%w: empty (are four-letter words switched off?)", ErrBadReply)
	case t == notServingText:
		return ErrNotServing
	case strings.HasSuffix(t, notAllowedSuffix) && !strings.Contains(t, "\n"):
		return ErrNotAllowed
	}
	return nil
}

func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	const max = 60
	if len(line) > max {
		line = line[:max] + "..."
	}
	return line
}
