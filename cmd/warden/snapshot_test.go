package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/server"
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

// TestSnapshotRestore restores a backup into a new data directory, starts
// a server on it, reads the backed-up data and writes past the backup's
// zxid.
func TestSnapshotRestore(t *testing.T) {
	f := fsm.New(fsm.Options{})
	f.Apply(3, &fsm.Entry{Op: wire.OpCreateSession, Session: 0x56,
		Body: wire.Marshal(&fsm.SessionRecord{Timeout: 4000, Passwd: make([]byte, 16)})})
	f.Apply(3, &fsm.Entry{Op: wire.OpCreate, Session: 0x56, Time: 1,
		Body: wire.Marshal(&wire.CreateRequest{Path: "/app", Data: []byte("backed up"), ACL: wire.OpenACLUnsafe})})
	backupZxid := int64(f.LastZxid())
	dir := t.TempDir()
	meta := &raftpb.SnapshotMetadata{Index: proto.Uint64(40), Term: proto.Uint64(3), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}
	if err := storage.NewSnapshotter(storage.OSFS, dir, 3, nil).Save(meta, f.Clone().WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "snap-0000000000000003-0000000000000028.snap")
	data := filepath.Join(t.TempDir(), "restored")
	if err := restoreSnapshot(backup, data, ""); err != nil {
		t.Fatal(err)
	}
	if err := restoreSnapshot(backup, data, ""); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a used data directory: err = %v, want 'not empty'", err)
	}

	cfg := server.DefaultConfig()
	cfg.DataDir, cfg.DataLogDir = data, data
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(cfg, server.Options{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, _, err := c.Get(ctx, "/app")
	if err != nil || string(got) != "backed up" {
		t.Fatalf("Get(/app) after restore = %q, %v", got, err)
	}
	st, err := c.Set(ctx, "/app", []byte("after"), -1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mzxid <= backupZxid {
		t.Fatalf("first write after restore has zxid %#x, not past the backup's %#x", st.Mzxid, backupZxid)
	}
}
