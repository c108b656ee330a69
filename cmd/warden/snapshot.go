package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/server"
)

const snapshotDoc = `Reads a Warden snapshot file (snap-<term>-<index>.snap), read-only, after
checking its header and checksum.

  inspect  prints a summary: the raft metadata (index, term), the zxid state,
           the number of nodes (by kind) and sessions, and the sizes
  dump     prints the zxid state, every session, then every node: path,
           stat fields, data length and a preview, ACLs

  restore  writes the state of a snapshot file (a backup: a file copied
           from dataDir/version-2, or the AdminServer's /commands/snapshot)
           as the first snapshot of a new, empty data directory, for the
           membership -config gives (standalone without it); run it for
           every member of a new ensemble, then start them

Damage is reported where it is found.
`

// runSnapshotInspect is `warden snapshot inspect FILE`.
func runSnapshotInspect(args []string) error {
	if len(args) != 1 {
		return badUsage("expected one snapshot file, got %d arguments", len(args))
	}
	return inspectSnapshot(os.Stdout, args[0])
}

// runSnapshotDump is `warden snapshot dump FILE`.
func runSnapshotDump(args []string) error {
	if len(args) != 1 {
		return badUsage("expected one snapshot file, got %d arguments", len(args))
	}
	return dumpSnapshot(os.Stdout, args[0])
}

func inspectSnapshot(out io.Writer, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	meta, body, err := storage.OpenSnapshotFile(storage.OSFS, path)
	if err != nil {
		return err
	}
	defer body.Close()
	sum, err := fsm.InspectSnapshot(body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(out, "file          %s\n", path)
	fmt.Fprintf(out, "raft          index %d, term %d, voters %v, learners %v\n",
		meta.GetIndex(), meta.GetTerm(), meta.GetConfState().GetVoters(), meta.GetConfState().GetLearners())
	fmt.Fprintf(out, "format        version %d\n", sum.Version)
	fmt.Fprintf(out, "zxid          lastZxid 0x%x (epoch %d, counter %d), lastTerm %d\n", sum.LastZxid, sum.Epoch, sum.Counter, sum.LastTerm)
	fmt.Fprintf(out, "nodes         %d (%d ephemeral, %d container, %d ttl), %d data bytes\n",
		sum.Nodes, sum.Ephemerals, sum.Containers, sum.TTLs, sum.DataBytes)
	fmt.Fprintf(out, "sessions      %d\n", sum.Sessions)
	fmt.Fprintf(out, "size          %d bytes on disk, %d bytes uncompressed\n", fi.Size(), sum.StreamBytes)
	return nil
}

func dumpSnapshot(out io.Writer, path string) error {
	meta, body, err := storage.OpenSnapshotFile(storage.OSFS, path)
	if err != nil {
		return err
	}
	defer body.Close()
	fmt.Fprintf(out, "snapshot %s: raft index %d, term %d\n", path, meta.GetIndex(), meta.GetTerm())
	if err := fsm.DumpSnapshot(body, out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// snapshotRestoreFlags is `warden snapshot restore [-config zoo.cfg] FILE DATADIR`.
func snapshotRestoreFlags(fs *flag.FlagSet) func(args []string) error {
	cfgPath := fs.String("config", "", "the zoo.cfg the restored server will run with (its server.N lines and myid decide the membership; standalone without it)")
	return func(args []string) error {
		if len(args) != 2 {
			return badUsage("expected a snapshot file and a new data directory, got %d arguments", len(args))
		}
		return restoreSnapshot(args[0], args[1], *cfgPath)
	}
}

// restoreSnapshot writes the state of the snapshot file src as the first
// snapshot of the new data directory dst, for the membership cfgPath's
// zoo.cfg gives (standalone when empty).
func restoreSnapshot(src, dst, cfgPath string) error {
	self, members, err := membershipOf(cfgPath)
	if err != nil {
		return err
	}
	snapDir := storage.SnapDir(dst)
	if ents, err := os.ReadDir(snapDir); err == nil && len(ents) > 0 {
		return fmt.Errorf("restore: %s is not empty: restore into a new data directory", snapDir)
	}
	_, body, err := storage.OpenSnapshotFile(storage.OSFS, src)
	if err != nil {
		return err
	}
	defer body.Close()
	f, err := fsm.Restore(fsm.Options{}, body)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	f.MoveToNewLog()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	meta := node.Bootstrap(self, members)
	if err := storage.NewSnapshotter(storage.OSFS, snapDir, storage.MinSnapRetain, log).Save(meta, f.WriteSnapshot); err != nil {
		return fmt.Errorf("restore: writing the snapshot: %w", err)
	}
	fmt.Printf("restored %s into %s: %d znodes, %d sessions, zxid %#x\n",
		src, dst, f.Tree().NodeCount(), len(f.SessionIDs()), int64(f.LastZxid()))
	return nil
}

// membershipOf returns the member id and ensemble a zoo.cfg describes;
// an empty path means a standalone server.
func membershipOf(cfgPath string) (node.MemberID, []node.Member, error) {
	if cfgPath == "" {
		return 0, nil, nil
	}
	cfg, err := server.LoadConfig(cfgPath)
	if err != nil {
		return 0, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return 0, nil, err
	}
	self, members := server.Membership(cfg)
	return self, members, nil
}
