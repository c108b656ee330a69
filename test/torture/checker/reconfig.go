package checker

import (
	"fmt"
	"slices"
	"strings"
)

// EnsembleConfig is one observation of /zookeeper/config: its version
// and its server lines, each in one canonical spelling
// ("server.4=10.0.0.14:2888:3888:observer;10.0.0.14:2181"), sorted.
type EnsembleConfig struct {
	Version int64    `json:"version"`
	Servers []string `json:"servers"`
}

// String renders the configuration on one line.
func (c EnsembleConfig) String() string {
	return fmt.Sprintf("version %x [%s]", c.Version, strings.Join(c.Servers, " "))
}

func (c EnsembleConfig) same(o EnsembleConfig) bool { return slices.Equal(c.Servers, o.Servers) }

// ReconfigOp is one reconfig the nemesis issued: an incremental change
// made conditional on From, the version the nemesis had just read, asking
// for the membership Want (canonical, sorted), and what came of it.
type ReconfigOp struct {
	Desc string   `json:"desc"` // what it does ("add server.4 as observer")
	From int64    `json:"from"`
	Want []string `json:"want"`
	Span
	Outcome Outcome `json:"outcome"`
	Err     string  `json:"err,omitempty"`
	// Reply is the configuration an OK reconfig returned.
	Reply *EnsembleConfig `json:"reply,omitempty"`
}

// ConfigRead is a configuration the nemesis read after a sync, from
// Member, at At (ns since the run began). The nemesis reads one at a
// time, so its reads are in real-time order.
type ConfigRead struct {
	At     int64  `json:"at"`
	Member string `json:"member"`
	EnsembleConfig
}

// CheckReconfig checks the membership changes of a run. The nemesis is
// the only client that reconfigures, and every reconfig it issues is
// conditional on the version it read just before, so every change of the
// configuration must be explained by one of its reconfigs:
//
//   - one version is one membership, wherever it was seen (a read, a
//     reply, a member's final read);
//   - the nemesis's reads (each after a sync) never see an older version
//     than an earlier read;
//   - an OK reconfig's reply has a newer version than the one it was
//     conditional on, and exactly the membership it asked for;
//   - each version seen, after the oldest, follows the version before it
//     by a reconfig conditional on that one, asking for its membership,
//     that was not refused (OK, or Unknown);
//   - every member of the final membership agrees on the final
//     configuration, which is the newest version seen;
//   - no member outside the final membership that a reconfig removed
//     serves clients (servingOutside names those that did).
//
// final maps each member of the final membership to its final read.
func CheckReconfig(ops []ReconfigOp, reads []ConfigRead, final map[string]EnsembleConfig, servingOutside []string) Result {
	var f findings
	byVersion := map[int64]EnsembleConfig{}
	seen := func(c EnsembleConfig, where string) {
		if o, ok := byVersion[c.Version]; ok && !o.same(c) {
			f.add(fmt.Sprintf("%x", c.Version), "version %x is two memberships: %s and, %s, %s", c.Version, o, where, c)
			return
		}
		byVersion[c.Version] = c
	}
	var last *ConfigRead
	for i := range reads {
		r := &reads[i]
		seen(r.EnsembleConfig, fmt.Sprintf("read on %s at %s", r.Member, at(r.At)))
		if last != nil && r.Version < last.Version {
			f.add(fmt.Sprintf("%x", r.Version), "read on %s at %s saw version %x, older than version %x read on %s at %s",
				r.Member, at(r.At), r.Version, last.Version, last.Member, at(last.At))
		}
		last = r
	}
	var nOK, nUnknown, nFailed int
	for _, op := range ops {
		switch op.Outcome {
		case OK:
			nOK++
			if op.Reply == nil {
				f.add(op.Desc, "%s (from version %x) acknowledged without a configuration", op.Desc, op.From)
				continue
			}
			seen(*op.Reply, fmt.Sprintf("the reply to %s", op.Desc))
			if op.Reply.Version <= op.From || !slices.Equal(op.Reply.Servers, op.Want) {
				f.add(op.Desc, "%s (from version %x) acknowledged with %s, want a newer version with [%s]",
					op.Desc, op.From, op.Reply, strings.Join(op.Want, " "))
			}
		case Unknown:
			nUnknown++
		default:
			nFailed++
		}
	}
	ms := sortedKeys(final)
	if len(ms) == 0 {
		f.add("", "no member's final read of /zookeeper/config to check against")
	}
	for _, m := range ms {
		seen(final[m], "final read on "+m)
	}
	versions := make([]int64, 0, len(byVersion))
	for v := range byVersion {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for i := 1; i < len(versions); i++ {
		prev, next := byVersion[versions[i-1]], byVersion[versions[i]]
		explained, refused := false, ""
		for _, op := range ops {
			if op.From != prev.Version || !slices.Equal(op.Want, next.Servers) {
				continue
			}
			if op.Outcome == Failed {
				refused = fmt.Sprintf("; %s was refused (%s)", op.Desc, op.Err)
				continue
			}
			explained = true
		}
		if !explained {
			f.add(fmt.Sprintf("%x", next.Version), "%s follows %s, but no reconfig from version %x that was not refused asked for it%s",
				next, prev, prev.Version, refused)
		}
	}
	if len(versions) > 0 {
		newest := byVersion[versions[len(versions)-1]]
		for _, m := range ms {
			if c := final[m]; c.Version != newest.Version {
				f.add(m, "member %s ends with %s, not the newest configuration seen, %s", m, c, newest)
			}
		}
	}
	for _, m := range servingOutside {
		f.add(m, "member %s serves clients after a reconfig removed it", m)
	}
	f.note("reconfigs: %d ok, %d unknown, %d refused; %d configurations seen; %d members read",
		nOK, nUnknown, nFailed, len(versions), len(ms))
	return f.result("reconfig", len(ops))
}
