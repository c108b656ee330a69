package checker

import (
	"cmp"
	"fmt"
	"slices"
)

// SessionRecord is one client session of the sessions workload. Created:
// ephemerals whose create was acknowledged; Maybe: ephemerals whose
// create had an unknown outcome (a Failed create is left out). Died: the
// session was ended by the harness (closed or left to expire) or
// expired; a live session is one the harness kept alive to the end and
// whose client never saw expiry. Paths are full paths, in the form the
// final reads list them; the workload never deletes an ephemeral itself.
type SessionRecord struct {
	Client  int
	Session int64
	Created []string
	Maybe   []string
	Died    bool
}

// CheckEphemerals checks ephemerals against their sessions' fates. final
// maps a member name to the ephemeral paths it listed after healing (and
// after the session timeout had passed for dead sessions).
//
// Ephemerals of a dead session (Created or Maybe) must be absent on every
// member; Created ephemerals of a live session present on every member;
// Maybe ephemerals of live sessions may be present or absent, but the
// same on every member; any path listed that no session attempted is an
// anomaly. A path several sessions attempted (one after another's death)
// must be present if a live session Created it, may be present if a live
// session attempted it, and must be absent otherwise. Anomalies name the
// path (Result.Key), the member and the session.
func CheckEphemerals(sessions []SessionRecord, final map[string][]string) Result {
	type claim struct {
		rec     *SessionRecord
		created bool // acknowledged, not Maybe
	}
	var f findings
	claims := make(map[string][]claim)
	dead, nEph := 0, 0
	for i := range sessions {
		s := &sessions[i]
		if s.Died {
			dead++
		}
		for _, p := range s.Created {
			claims[p] = append(claims[p], claim{rec: s, created: true})
		}
		for _, p := range s.Maybe {
			claims[p] = append(claims[p], claim{rec: s})
		}
		nEph += len(s.Created) + len(s.Maybe)
	}
	f.note("sessions: %d live, %d dead; %d ephemerals attempted; %d members read",
		len(sessions)-dead, dead, nEph, len(final))
	who := func(c claim) string {
		return fmt.Sprintf("session 0x%x (client %d)", c.rec.Session, c.rec.Client)
	}

	ms := members(final, &f, "ephemerals")
	on := presence(final, ms, &f)
	for _, p := range sortedKeys(claims) {
		present := on[p]
		var must, may *claim
		for i, c := range claims[p] {
			if c.rec.Died {
				continue
			}
			if may == nil {
				may = &claims[p][i]
			}
			if c.created && must == nil {
				must = &claims[p][i]
			}
		}
		switch {
		case must != nil:
			for _, m := range missing(ms, present) {
				f.add(p, "%s: lost: ephemeral of live %s, create acknowledged, absent on member %s", p, who(*must), m)
			}
		case may != nil:
			if len(present) > 0 && len(present) < len(ms) {
				f.add(p, "%s: members disagree on an ephemeral of unknown outcome of live %s: present on %v, absent on %v",
					p, who(*may), present, missing(ms, present))
			}
		default:
			for _, m := range present {
				f.add(p, "%s: ephemeral of dead %s survives on member %s", p, who(claims[p][0]), m)
			}
		}
	}
	for _, p := range sortedKeys(on) {
		if _, attempted := claims[p]; !attempted {
			for _, m := range on[p] {
				f.add(p, "%s: listed on member %s, but no session created it", p, m)
			}
		}
	}
	return f.result("ephemerals", nEph)
}

// ObsKind says what a WatchObs saw.
type ObsKind int

const (
	// ObsRead is a getData that returned (and set a data watch).
	ObsRead ObsKind = iota
	// ObsEvent is a NodeDataChanged watch event.
	ObsEvent
)

// String returns "read" or "event".
func (k ObsKind) String() string {
	if k == ObsRead {
		return "read"
	}
	return "event"
}

// WatchObs is one observation of one session, in the order that
// session's client received them from its server (Seq increasing).
//
// The harness must record events and read replies in the order the
// client library took them off the connection, each once, or the
// checker sees an order ZooKeeper never showed: the client hands an
// event to its watch channel before it hands over any later reply, so
// an event already waiting in a watch channel when a read returns came
// first and must get the lower Seq.
//
// Kind Read: a getData (which also set a
// data watch) returned Mzxid for Path. Kind Event: a NodeDataChanged
// watch event for Path arrived with Zxid (the zxid of the change that
// fired it, or -1 when the server does not send it, as ZooKeeper 3.8
// does not). Paths are only ever set, never deleted.
type WatchObs struct {
	Client  int
	Session int64
	Seq     int
	Kind    ObsKind
	Path    string
	Mzxid   int64 // reads: the node's mzxid
	Zxid    int64 // events: the change's zxid, -1 unknown
}

// CheckWatches checks each session's observations, in Seq order:
//
//	(a) events with a known zxid arrive in strictly increasing zxid
//	    order (two events of one zxid are allowed on different paths: a
//	    multi changes several nodes in one transaction);
//	(b) an event for Path with a known zxid is newer than the last read
//	    of Path before it (Zxid > that read's Mzxid): it never announces
//	    a change older than one the client already read;
//	(c) reads of a Path never go back: Mzxid never decreases across a
//	    session's reads of it;
//	(d) after an event for Path, the next read of Path sees the change:
//	    its Mzxid is > the Mzxid of the read that armed the watch (the
//	    last read of Path before the event) and >= the event's Zxid when
//	    known. This needs reads to be sync then getData (or the session
//	    to stay on one server): events do not advance the client's last
//	    zxid, so a session that reconnects to a lagging member between
//	    the event and the read may read the old data from it unsynced;
//	(e) no event is missed: every read arms a data watch, so when two
//	    reads of Path with no event for Path between them return
//	    different Mzxids, the change between them fired a watch whose
//	    event the client never got before the change's data. (Watches
//	    survive reconnection: the client re-registers them, and the
//	    server fires those whose node changed meanwhile.)
//
// Result.Ops counts observations; Result.Notes says how many events had
// no zxid (for those, (a), (b) and the zxid half of (d) are skipped).
// Anomalies name the path (Result.Key), the session and the Seq.
func CheckWatches(obs []WatchObs) Result {
	type sessionKey struct {
		client  int
		session int64
	}
	var f findings
	bySession := make(map[sessionKey][]WatchObs)
	events, noZxid := 0, 0
	for _, o := range obs {
		k := sessionKey{o.Client, o.Session}
		bySession[k] = append(bySession[k], o)
		if o.Kind == ObsEvent {
			events++
			if o.Zxid < 0 {
				noZxid++
			}
		}
	}
	f.note("%d observations in %d sessions; %d events, %d of them without a zxid", len(obs), len(bySession), events, noZxid)

	keys := make([]sessionKey, 0, len(bySession))
	for k := range bySession {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b sessionKey) int {
		if c := cmp.Compare(a.client, b.client); c != 0 {
			return c
		}
		return cmp.Compare(a.session, b.session)
	})
	for _, k := range keys {
		seen := bySession[k]
		slices.SortStableFunc(seen, func(a, b WatchObs) int { return cmp.Compare(a.Seq, b.Seq) })
		checkSessionWatches(seen, &f)
	}
	return f.result("watches", len(obs))
}

// checkSessionWatches checks one session's observations, in order.
func checkSessionWatches(seen []WatchObs, f *findings) {
	// pathState is what the session has seen of one path.
	type pathState struct {
		read     *WatchObs // the last read, nil before the first
		event    *WatchObs // the last event since that read, nil if none
		maxEvent int64     // the highest known zxid among events since that read, -1 if none
	}
	paths := make(map[string]*pathState)
	var lastEvent *WatchObs // the last event with a known zxid
	lastZxidPaths := make(map[string]bool)
	where := func(o *WatchObs) string {
		return fmt.Sprintf("session 0x%x (client %d) seq %d", o.Session, o.Client, o.Seq)
	}
	for i := range seen {
		o := &seen[i]
		ps := paths[o.Path]
		if ps == nil {
			ps = &pathState{maxEvent: -1}
			paths[o.Path] = ps
		}
		switch o.Kind {
		case ObsEvent:
			if o.Zxid >= 0 {
				// (a)
				switch {
				case lastEvent == nil || o.Zxid > lastEvent.Zxid:
					clear(lastZxidPaths)
					lastEvent = o
					lastZxidPaths[o.Path] = true
				case o.Zxid == lastEvent.Zxid && !lastZxidPaths[o.Path]:
					lastZxidPaths[o.Path] = true
				default:
					f.add(o.Path, "%s: %s: event out of order: zxid 0x%x after an event with zxid 0x%x (%s, seq %d)",
						o.Path, where(o), o.Zxid, lastEvent.Zxid, lastEvent.Path, lastEvent.Seq)
				}
				// (b)
				if ps.read != nil && o.Zxid <= ps.read.Mzxid {
					f.add(o.Path, "%s: %s: event announces zxid 0x%x, not newer than mzxid 0x%x already read (seq %d)",
						o.Path, where(o), o.Zxid, ps.read.Mzxid, ps.read.Seq)
				}
				ps.maxEvent = max(ps.maxEvent, o.Zxid)
			}
			ps.event = o
		default:
			if r := ps.read; r != nil {
				// (c)
				if o.Mzxid < r.Mzxid {
					f.add(o.Path, "%s: %s: read went back: mzxid 0x%x after mzxid 0x%x (seq %d)",
						o.Path, where(o), o.Mzxid, r.Mzxid, r.Seq)
				}
				switch {
				case ps.event != nil && o.Mzxid <= r.Mzxid:
					// (d), against the arming read
					f.add(o.Path, "%s: %s: change not visible after its event (seq %d): read mzxid 0x%x, no newer than the read that set the watch (0x%x, seq %d)",
						o.Path, where(o), ps.event.Seq, o.Mzxid, r.Mzxid, r.Seq)
				case ps.event == nil && o.Mzxid > r.Mzxid:
					// (e)
					f.add(o.Path, "%s: %s: missed event: mzxid went from 0x%x (seq %d) to 0x%x with no event between",
						o.Path, where(o), r.Mzxid, r.Seq, o.Mzxid)
				}
			}
			// (d), against the event's zxid
			if ps.event != nil && ps.maxEvent >= 0 && o.Mzxid < ps.maxEvent {
				f.add(o.Path, "%s: %s: change not visible after its event: read mzxid 0x%x, older than event zxid 0x%x",
					o.Path, where(o), o.Mzxid, ps.maxEvent)
			}
			ps.read, ps.event, ps.maxEvent = o, nil, -1
		}
	}
}
