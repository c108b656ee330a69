package checker

import "testing"

func TestCheckEphemerals(t *testing.T) {
	sessions := []SessionRecord{
		{Client: 0, Session: 0x100, Created: []string{"/e/0a", "/e/0b"}, Maybe: []string{"/e/0m"}},
		{Client: 1, Session: 0x101, Created: []string{"/e/1a"}, Maybe: []string{"/e/1m"}, Died: true},
		{Client: 1, Session: 0x102, Created: []string{"/e/1a", "/e/1b"}}, // reuses a dead session's path
		{Client: 2, Session: 0x103, Created: []string{"/e/2a"}, Died: true},
	}
	live := []string{"/e/0a", "/e/0b", "/e/1a", "/e/1b"}
	with := func(extra ...string) []string { return append(append([]string(nil), live...), extra...) }
	for _, tc := range []struct {
		name  string
		final map[string][]string
		v     verdict
	}{
		{"maybe absent everywhere", map[string][]string{"m1": with(), "m2": with()}, pass},
		{"maybe present everywhere", map[string][]string{"m1": with("/e/0m"), "m2": with("/e/0m")}, pass},

		{"dead session's ephemeral survives", map[string][]string{"m1": with(), "m2": with("/e/2a")},
			fail("/e/2a", "/e/2a: ephemeral of dead session 0x103 (client 2) survives on member m2")},
		{"dead session's maybe ephemeral survives", map[string][]string{"m1": with("/e/1m"), "m2": with("/e/1m")},
			fail("/e/1m", "/e/1m: ephemeral of dead session 0x101 (client 1) survives on member m1")},
		{"live session's ephemeral lost", map[string][]string{"m1": with(), "m2": live[1:]},
			fail("/e/0a", "/e/0a: lost: ephemeral of live session 0x100 (client 0), create acknowledged, absent on member m2")},
		{"members disagree on a maybe", map[string][]string{"m1": with("/e/0m"), "m2": with()},
			fail("/e/0m", "/e/0m: members disagree on an ephemeral of unknown outcome of live session 0x100 (client 0): present on [m1], absent on [m2]")},
		{"path no session created", map[string][]string{"m1": with("/e/zz"), "m2": with()},
			fail("/e/zz", "/e/zz: listed on member m1, but no session created it")},
		{"no final read", nil, fail("", "no member's final read")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.check(t, CheckEphemerals(sessions, tc.final), "ephemerals")
		})
	}
}

func TestCheckWatches(t *testing.T) {
	// rd and ev are observations of session 0x200 of client 3; the
	// test numbers their Seq.
	rd := func(path string, mzxid int64) WatchObs {
		return WatchObs{Client: 3, Session: 0x200, Kind: ObsRead, Path: path, Mzxid: mzxid}
	}
	ev := func(path string, zxid int64) WatchObs {
		return WatchObs{Client: 3, Session: 0x200, Kind: ObsEvent, Path: path, Zxid: zxid}
	}
	seq := func(os ...WatchObs) []WatchObs {
		for i := range os {
			os[i].Seq = i + 1
		}
		return os
	}
	for _, tc := range []struct {
		name string
		obs  []WatchObs
		v    verdict
	}{
		{"none", nil, pass},
		{"events with zxids", seq(
			rd("/w/a", 5), rd("/w/b", 6),
			ev("/w/a", 7), rd("/w/a", 9), // the read may see a newer change than the event's
			ev("/w/b", 8), rd("/w/b", 8),
			ev("/w/a", 10), rd("/w/a", 10),
			rd("/w/a", 10), rd("/w/b", 8), // no change, no event
		), pass},
		{"events without zxids", seq(
			rd("/w/a", 5), ev("/w/a", -1), ev("/w/a", -1), rd("/w/a", 7), ev("/w/a", -1), rd("/w/a", 8),
		), pass},
		{"one zxid on two paths (a multi)", seq(
			rd("/w/a", 5), rd("/w/b", 5), ev("/w/a", 9), ev("/w/b", 9), rd("/w/a", 9), rd("/w/b", 9),
		), pass},
		{"sessions are judged apart", append(
			seq(rd("/w/a", 5), ev("/w/a", 9), rd("/w/a", 9)),
			WatchObs{Client: 4, Session: 0x201, Seq: 1, Kind: ObsRead, Path: "/w/a", Mzxid: 3},
			WatchObs{Client: 4, Session: 0x201, Seq: 2, Kind: ObsEvent, Path: "/w/a", Zxid: 5}),
			pass},
		{"judged in Seq order, not slice order", func() []WatchObs {
			os := seq(rd("/w/a", 5), ev("/w/a", 9), rd("/w/a", 9))
			os[0], os[2] = os[2], os[0]
			return os
		}(), pass},

		{"events out of order", seq(
			rd("/w/a", 5), rd("/w/b", 5), ev("/w/b", 9), ev("/w/a", 7),
		), fail("/w/a", "/w/a: session 0x200 (client 3) seq 4: event out of order: zxid 0x7 after an event with zxid 0x9 (/w/b, seq 3)")},
		{"one event twice", seq(
			rd("/w/a", 5), ev("/w/a", 9), ev("/w/a", 9),
		), fail("/w/a", "event out of order: zxid 0x9 after an event with zxid 0x9")},
		{"event older than a read", seq(
			rd("/w/a", 5), ev("/w/a", 4),
		), fail("/w/a", "/w/a: session 0x200 (client 3) seq 2: event announces zxid 0x4, not newer than mzxid 0x5 already read (seq 1)")},
		{"read went back", seq(
			rd("/w/a", 9), rd("/w/a", 5),
		), fail("/w/a", "/w/a: session 0x200 (client 3) seq 2: read went back: mzxid 0x5 after mzxid 0x9 (seq 1)")},
		{"change not visible after its event", seq(
			rd("/w/a", 5), ev("/w/a", -1), rd("/w/a", 5),
		), fail("/w/a", "/w/a: session 0x200 (client 3) seq 3: change not visible after its event (seq 2): read mzxid 0x5, no newer than the read that set the watch (0x5, seq 1)")},
		{"read older than its event", seq(
			rd("/w/a", 5), ev("/w/a", 9), rd("/w/a", 7),
		), fail("/w/a", "/w/a: session 0x200 (client 3) seq 3: change not visible after its event: read mzxid 0x7, older than event zxid 0x9")},
		{"missed event", seq(
			rd("/w/a", 5), rd("/w/a", 7),
		), fail("/w/a", "/w/a: session 0x200 (client 3) seq 2: missed event: mzxid went from 0x5 (seq 1) to 0x7 with no event between")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckWatches(tc.obs)
			tc.v.check(t, r, "watches")
			if r.Ops != len(tc.obs) {
				t.Errorf("Ops = %d, want %d", r.Ops, len(tc.obs))
			}
		})
	}
}

func TestCheckWatchesNotesEventsWithoutZxid(t *testing.T) {
	r := CheckWatches([]WatchObs{
		{Session: 1, Seq: 1, Kind: ObsRead, Path: "/w", Mzxid: 1},
		{Session: 1, Seq: 2, Kind: ObsEvent, Path: "/w", Zxid: -1},
		{Session: 1, Seq: 3, Kind: ObsRead, Path: "/w", Mzxid: 2},
		{Session: 1, Seq: 4, Kind: ObsEvent, Path: "/w", Zxid: 3},
	})
	pass.check(t, r, "watches")
	if want := "4 observations in 1 sessions; 2 events, 1 of them without a zxid"; len(r.Notes) != 1 || r.Notes[0] != want {
		t.Errorf("Notes = %q, want [%q]", r.Notes, want)
	}
}
