package main

import (
	"fmt"
	"io"
	"os"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/storage"
)

const snapshotDoc = `Reads a Warden snapshot file (snap-<term>-<index>.snap), read-only, after
checking its header and checksum.

  inspect  prints a summary: the raft metadata (index, term), the zxid state,
           the number of nodes (by kind) and sessions, and the sizes
  dump     prints the zxid state, every session, then every node: path,
           stat fields, data length and a preview, ACLs

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
