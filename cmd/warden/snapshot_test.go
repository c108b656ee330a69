package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/wire"
)

// TestSnapshotTool writes a snapshot file as the server does and reads it
// back with `warden snapshot inspect` and `dump`.
func TestSnapshotTool(t *testing.T) {
	f := fsm.New(fsm.Options{})
	f.Apply(2, &fsm.Entry{Op: wire.OpCreateSession, Session: 0x55,
		Body: wire.Marshal(&fsm.SessionRecord{Timeout: 4000, Passwd: make([]byte, 16)})})
	f.Apply(2, &fsm.Entry{Op: wire.OpCreate, Session: 0x55, Time: 1,
		Body: wire.Marshal(&wire.CreateRequest{Path: "/app", Data: []byte("v1"), ACL: wire.OpenACLUnsafe})})
	dir := t.TempDir()
	meta := &raftpb.SnapshotMetadata{Index: proto.Uint64(9), Term: proto.Uint64(2), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}
	if err := storage.NewSnapshotter(storage.OSFS, dir, 3, nil).Save(meta, f.Clone().WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "snap-0000000000000002-0000000000000009.snap")
	tests := []struct {
		name string
		run  func(io.Writer, string) error
		want []string
	}{
		{"inspect", inspectSnapshot, []string{
			"raft          index 9, term 2, voters [1], learners []\n",
			"zxid          lastZxid 0x100000002 (epoch 1, counter 2), lastTerm 2\n",
			"nodes         5 (0 ephemeral, 0 container, 0 ttl), 2 data bytes\n",
			"sessions      1\n",
		}},
		{"dump", dumpSnapshot, []string{
			"raft index 9, term 2\n",
			"  0x55 timeout 4000ms passwd 16 bytes\n",
			"/app\n  czxid 0x100000002",
			"  data 2 bytes: \"v1\"\n  acl world:anyone:cdrwa\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tt.run(&out, path); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
	if code := dispatch([]string{"snapshot", "peek", path}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("unknown subcommand: exit %d, want 2", code)
	}
	if err := inspectSnapshot(io.Discard, filepath.Join(dir, "missing.snap")); err == nil {
		t.Fatal("missing file accepted")
	}
}
