package node

import (
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestCheckMembershipFollowsTheLogsConfChanges: after a reconfig a
// member rewrites its server lines, so on restart zoo.cfg names the
// membership of a conf change entry of the log after the snapshot, not
// the snapshot's (regression: a member restarted after a reconfig refused
// to start, "the data directory belongs to an ensemble whose members are
// [server.1 server.2 server.3]"). The lines may also lag the log by its
// last changes (applied, or even committed, after they were written).
func TestCheckMembershipFollowsTheLogsConfChanges(t *testing.T) {
	raftID := func(id MemberID) uint64 { return id.RaftID() }
	change := func(index uint64, changes ...*raftpb.ConfChangeSingle) *raftpb.Entry {
		data, err := proto.Marshal(&raftpb.ConfChangeV2{Changes: changes})
		if err != nil {
			t.Fatal(err)
		}
		return &raftpb.Entry{Index: proto.Uint64(index), Type: raftpb.EntryType_EntryConfChangeV2.Enum(), Data: data}
	}
	single := func(typ raftpb.ConfChangeType, id MemberID) *raftpb.ConfChangeSingle {
		return &raftpb.ConfChangeSingle{Type: typ.Enum(), NodeId: proto.Uint64(raftID(id))}
	}
	normal := func(index uint64) *raftpb.Entry {
		return &raftpb.Entry{Index: proto.Uint64(index), Type: raftpb.EntryType_EntryNormal.Enum()}
	}
	members := func(ids ...int) []Member {
		var ms []Member
		for _, id := range ids {
			if id < 0 {
				ms = append(ms, Member{ID: MemberID(-id), Observer: true})
			} else {
				ms = append(ms, Member{ID: MemberID(id)})
			}
		}
		return ms
	}
	base := &raftpb.ConfState{Voters: []uint64{raftID(1), raftID(2), raftID(3)}}
	// Add server.4, add server.5 as an observer, remove server.1.
	log := []*raftpb.Entry{
		normal(10),
		change(11, single(raftpb.ConfChangeType_ConfChangeAddNode, 4)),
		normal(12),
		change(13, single(raftpb.ConfChangeType_ConfChangeAddLearnerNode, 5)),
		change(14, single(raftpb.ConfChangeType_ConfChangeRemoveNode, 1)),
		change(15), // leaving a joint configuration
		normal(16),
	}
	tests := []struct {
		name    string
		members []Member // zoo.cfg's, 1 is self
		ents    []*raftpb.Entry
		ok      bool
	}{
		{"the snapshot's membership, no log", members(1, 2, 3), nil, true},
		{"the last conf change's", members(2, 3, 4, -5), log, true},
		{"an earlier conf change's (lines behind the log)", members(1, 2, 3, 4), log, true},
		{"the snapshot's, conf changes after it", members(1, 2, 3), log, true},
		{"a membership the log never had", members(2, 3), log, false},
		{"the last without an observer (removed, draining)", members(2, 3, 4), log, true},
		{"an observer as a voter", members(2, 3, 4, 5), log, false},
		{"another membership, no log", members(1, 2, 4), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{ID: 2, Members: tt.members, DataDir: "/data"}
			err := checkMembership(cfg, base, tt.ents)
			switch {
			case tt.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !tt.ok && err == nil:
				t.Fatal("accepted")
			case !tt.ok && !strings.Contains(err.Error(), "zoo.cfg gives"):
				t.Fatalf("error %q does not say what zoo.cfg gives", err)
			}
		})
	}
}
