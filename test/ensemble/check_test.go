package ensemble

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenzk/warden/client"
)

// maxReported bounds the violations printed by one check.
const maxReported = 20

// node is a key as one member showed it.
type node struct {
	exists  bool
	seq     int // the data: the sequence number of the write that set it
	version int32
}

func (n node) String() string {
	if !n.exists {
		return "absent"
	}
	return fmt.Sprintf("#%d version %d", n.seq, n.version)
}

// checker reads every key of the history from one member at a time, after
// a sync, and checks it against the writes. It keeps the highest version
// any of its checks saw per path: versions never go backwards, and keys
// (never deleted) never disappear.
type checker struct {
	t    *testing.T
	h    *history
	seen map[string]node
}

func newChecker(t *testing.T, h *history) *checker {
	return &checker{t: t, h: h, seen: map[string]node{}}
}

// check reads the keys from m. While writers run (quiesced false), a key
// may hold writes newer than the history snapshot taken before the
// reads; once they stopped (quiesced), the history is complete and each
// key must hold exactly its last acknowledged write, or one of the
// unknown-outcome writes after it. It returns what m showed.
func (ck *checker) check(m *member, quiesced bool) map[string]node {
	t := ck.t
	t.Helper()
	writes := ck.h.snapshot()
	paths := make([]string, 0, len(writes))
	for p := range writes {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	c := connect(t, m.Addr, "checker on "+m.String()) // this member only
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := c.Sync(ctx, rootPath); err != nil {
		t.Fatalf("check on %v: sync: %v", m, err)
	}
	shown := make(map[string]node, len(paths))
	var bad []string
	for _, p := range paths {
		var n node
		data, st, err := c.Get(ctx, p)
		switch {
		case err == nil:
			n = node{exists: true, version: st.Version, seq: -1}
			if seq, err := strconv.Atoi(string(data)); err == nil {
				n.seq = seq
			}
		case errors.Is(err, client.ErrNoNode):
		default:
			t.Fatalf("check on %v: get %s: %v", m, p, err)
		}
		shown[p] = n
		bad = append(bad, ck.judge(p, writes[p], n, quiesced)...)
	}
	if len(bad) > 0 {
		more := ""
		if len(bad) > maxReported {
			more = fmt.Sprintf("\n... and %d more", len(bad)-maxReported)
			bad = bad[:maxReported]
		}
		t.Fatalf("check on %v (quiesced=%v), %d keys: the tree contradicts the clients' history:\n%s%s",
			m, quiesced, len(paths), strings.Join(bad, "\n"), more)
	}
	return shown
}

// judge returns what is wrong with n, the state of path p, given its
// writes (in seq order), and records n as seen.
func (ck *checker) judge(p string, ws []write, n node, quiesced bool) []string {
	var bad []string
	fail := func(format string, args ...any) {
		bad = append(bad, fmt.Sprintf("%s is %v: ", p, n)+fmt.Sprintf(format, args...))
	}
	last := -1 // index of the last acknowledged write
	for i, w := range ws {
		if w.outcome == acked {
			last = i
		}
	}
	// maybe: the writes after the last ack that may have been applied.
	var maybe []write
	for _, w := range ws[last+1:] {
		if w.outcome == unknown || w.outcome == pending {
			maybe = append(maybe, w)
		}
	}
	if prev, ok := ck.seen[p]; ok {
		switch {
		case prev.exists && !n.exists:
			fail("an earlier check saw %v, and no key is ever deleted", prev)
		case n.version < prev.version:
			fail("went back: an earlier check saw version %d", prev.version)
		}
	}
	if n.exists && n.version >= ck.seen[p].version {
		ck.seen[p] = n
	}

	if last >= 0 {
		a := ws[last]
		switch {
		case !n.exists:
			fail("acknowledged %v is missing", a)
			return bad
		case n.version < a.version:
			fail("version below acknowledged %v", a)
		case quiesced && n.version > a.version+int32(len(maybe)):
			fail("version above acknowledged %v plus the %d unknown-outcome writes after it", a, len(maybe))
		}
	} else if n.exists && quiesced && len(maybe) == 0 {
		fail("no create of it was acknowledged or had an unknown outcome")
	}
	if !n.exists {
		return bad
	}
	if n.seq < 0 {
		fail("data is not a write's sequence number")
		return bad
	}
	var w *write
	for i := range ws {
		if ws[i].seq == n.seq {
			w = &ws[i]
		}
	}
	switch {
	case w == nil && (quiesced || len(ws) == 0 || n.seq < ws[len(ws)-1].seq):
		fail("no write #%d of this key was sent", n.seq)
	case w == nil:
		// A write newer than the snapshot: the writers are running.
	case w.outcome == refused:
		fail("%v was refused yet applied", *w)
	case last >= 0 && w.seq < ws[last].seq:
		fail("went back from acknowledged %v", ws[last])
	case w.outcome == acked && n.version != w.version:
		fail("data of %v but another version", *w)
	case quiesced && len(maybe) == 0 && last >= 0 && w.seq != ws[last].seq:
		fail("want the last acknowledged %v, no later write had an unknown outcome", ws[last])
	}
	return bad
}

// checkEphemeral checks that m shows path as an ephemeral of owner.
func checkEphemeral(t *testing.T, m *member, path string, owner int64) {
	t.Helper()
	c := connect(t, m.Addr, "ephemeral checker on "+m.String())
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := c.Sync(ctx, path); err != nil {
		t.Fatalf("%v: sync %s: %v", m, path, err)
	}
	st, ok, err := c.Exists(ctx, path)
	switch {
	case err != nil:
		t.Fatalf("%v: exists %s: %v", m, path, err)
	case !ok:
		t.Fatalf("%v: the ephemeral %s of session %#x, which survived the scenario, is gone", m, path, owner)
	case st.EphemeralOwner != owner:
		t.Fatalf("%v: %s is owned by %#x, want the surviving session %#x", m, path, st.EphemeralOwner, owner)
	}
}

// TestJudge checks the checker against hand-made histories of one key:
// what it must accept, and what it must report.
func TestJudge(t *testing.T) {
	create := func(seq int, o outcome) write {
		return write{path: "/k", seq: seq, create: true, outcome: o}
	}
	set := func(seq int, o outcome, version int32) write {
		return write{path: "/k", seq: seq, outcome: o, version: version}
	}
	at := func(seq int, version int32) node { return node{exists: true, seq: seq, version: version} }
	absent := node{}
	tests := []struct {
		name     string
		writes   []write
		seen     *node // what an earlier check saw, if any
		shown    node
		quiesced bool
		want     string // a substring of the violation; "" for none
	}{
		{"last ack", []write{create(1, acked), set(2, acked, 1)}, nil, at(2, 1), true, ""},
		{"acknowledged create missing", []write{create(1, acked)}, nil, absent, true, "acknowledged create /k #1 acked version 0 is missing"},
		{"acknowledged set lost", []write{create(1, acked), set(2, acked, 1)}, nil, at(1, 0), true, "version below acknowledged"},
		{"unknown after the ack applied", []write{create(1, acked), set(2, unknown, 0)}, nil, at(2, 1), true, ""},
		{"unknown after the ack not applied", []write{create(1, acked), set(2, unknown, 0)}, nil, at(1, 0), true, ""},
		{"unknown before the ack resurfaces", []write{create(1, acked), set(2, unknown, 0), set(3, acked, 1)}, nil, at(2, 2), true, "went back from acknowledged"},
		{"refused write applied", []write{create(1, acked), set(2, refused, 0)}, nil, at(2, 1), true, "was refused yet applied"},
		{"acknowledged data, other version", []write{create(1, acked), set(2, acked, 1)}, nil, at(2, 2), true, "but another version"},
		{"more versions than writes", []write{create(1, acked), set(2, unknown, 0)}, nil, at(2, 3), true, "version above acknowledged"},
		{"data no write sent", []write{create(1, acked), set(3, acked, 1)}, nil, at(2, 1), true, "no write #2"},
		{"a later write while writers run", []write{create(1, acked)}, nil, at(7, 4), false, ""},
		{"a later write once quiesced", []write{create(1, acked)}, nil, at(7, 4), true, "no write #7"},
		{"unknown create absent", []write{create(1, unknown)}, nil, absent, true, ""},
		{"unknown create present", []write{create(1, unknown)}, nil, at(1, 0), true, ""},
		{"refused create present", []write{create(1, refused)}, nil, at(1, 0), true, "no create of it was acknowledged"},
		{"version went back between checks", []write{create(1, acked), set(2, unknown, 0)}, &node{exists: true, seq: 2, version: 1}, at(1, 0), true, "went back: an earlier check saw version 1"},
		{"key disappeared between checks", []write{create(1, unknown)}, &node{exists: true, seq: 1}, absent, true, "no key is ever deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ck := newChecker(t, newHistory())
			if tt.seen != nil {
				ck.seen["/k"] = *tt.seen
			}
			bad := ck.judge("/k", tt.writes, tt.shown, tt.quiesced)
			got := strings.Join(bad, "\n")
			switch {
			case tt.want == "" && len(bad) > 0:
				t.Errorf("judge reported:\n%s\nwant nothing", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("judge reported:\n%s\nwant %q", got, tt.want)
			}
		})
	}
}
