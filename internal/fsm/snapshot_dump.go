package fsm

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// toolMaxField is the field limit the tools read with: larger than any
// jute.maxbuffer in use, still a bound on one frame's memory.
const toolMaxField = 64 << 20

// dataPreview is how many bytes of a node's data DumpSnapshot shows.
const dataPreview = 64

// SnapshotSummary describes a snapshot stream, for `warden snapshot
// inspect`.
type SnapshotSummary struct {
	Version  uint32 // stream format version
	Epoch    uint32 // zxid state: lastZxid = Epoch<<32 | Counter
	Counter  uint32
	LastTerm uint64 // raft term of the last applied entry
	LastZxid int64
	Sessions int64
	Nodes    int64 // the root and reserved nodes included
	// Kinds of nodes (by stored ephemeralOwner).
	Ephemerals, Containers, TTLs int64
	DataBytes                    int64 // Σ len(data) over all nodes
	StreamBytes                  int64 // length of the (uncompressed) stream
}

// InspectSnapshot reads a whole snapshot stream, checking its framing,
// checksums and counts (not the tree structure; Restore does that), and
// summarises it. Errors are as Restore's.
func InspectSnapshot(r io.Reader) (SnapshotSummary, error) {
	sr := newSnapReader(r, toolMaxField)
	if err := sr.header(); err != nil {
		return SnapshotSummary{}, err
	}
	s := SnapshotSummary{
		Version: snapVersion, Epoch: sr.hdr.epoch, Counter: sr.hdr.counter, LastTerm: sr.hdr.lastTerm,
		LastZxid: sr.hdr.lastZxid, Sessions: sr.hdr.sessions, Nodes: sr.hdr.nodes,
	}
	if err := sr.sessions(func(int64, Session) error { return nil }); err != nil {
		return SnapshotSummary{}, err
	}
	err := sr.nodes(func(r tree.NodeRecord) error {
		s.DataBytes += int64(len(r.Data))
		switch kindOf(r.EphemeralOwner) {
		case "ephemeral":
			s.Ephemerals++
		case "container":
			s.Containers++
		case "ttl":
			s.TTLs++
		}
		return nil
	})
	if err != nil {
		return SnapshotSummary{}, err
	}
	if err := sr.end(); err != nil {
		return SnapshotSummary{}, err
	}
	s.StreamBytes = sr.off
	return s, nil
}

// kindOf names the kind of node a stored ephemeralOwner means.
func kindOf(owner int64) string {
	switch {
	case owner == 0:
		return "persistent"
	case owner == tree.ContainerOwner:
		return "container"
	case uint64(owner)>>56 == 0xFF:
		return "ttl"
	}
	return "ephemeral"
}

// DumpSnapshot writes a human-readable listing of a snapshot stream to w:
// a header with the zxid state and counts, the sessions, then every node
// (path; stat fields as clients see them plus the stored cversion and
// owner; data length and a quoted preview of its first 64 bytes; ACLs).
// It streams, checking the stream as InspectSnapshot does; on damage the
// listing stops with the error.
func DumpSnapshot(r io.Reader, w io.Writer) error {
	bw := bufio.NewWriter(w)
	err := dump(r, bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func dump(r io.Reader, w *bufio.Writer) error {
	sr := newSnapReader(r, toolMaxField)
	if err := sr.header(); err != nil {
		return err
	}
	h := sr.hdr
	fmt.Fprintf(w, "snapshot format version %d\n", snapVersion)
	fmt.Fprintf(w, "lastZxid 0x%x (epoch %d, counter %d), lastTerm %d\n", h.lastZxid, h.epoch, h.counter, h.lastTerm)
	fmt.Fprintf(w, "%d sessions, %d nodes\n\nsessions:\n", h.sessions, h.nodes)
	err := sr.sessions(func(id int64, s Session) error {
		_, err := fmt.Fprintf(w, "  0x%x timeout %dms passwd %d bytes\n", id, s.Timeout, len(s.Passwd))
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nnodes:\n")
	// Children counts are not stored; the records come parents first, so
	// a node's numChildren is known only after its subtree. Show the
	// stored counters instead of the derived client view.
	err = sr.nodes(func(r tree.NodeRecord) error {
		fmt.Fprintf(w, "%s\n", r.Path)
		fmt.Fprintf(w, "  czxid 0x%x  ctime %s\n", r.Czxid, msTime(r.Ctime))
		fmt.Fprintf(w, "  mzxid 0x%x  mtime %s\n", r.Mzxid, msTime(r.Mtime))
		fmt.Fprintf(w, "  pzxid 0x%x\n", r.Pzxid)
		fmt.Fprintf(w, "  version %d  cversion %d (stored: child creations)  aversion %d\n", r.Version, r.StoredCversion, r.Aversion)
		fmt.Fprintf(w, "  %s\n", ownerText(r.EphemeralOwner))
		if r.Data == nil {
			fmt.Fprintf(w, "  data null\n")
		} else {
			p := r.Data
			more := ""
			if len(p) > dataPreview {
				p, more = p[:dataPreview], "..."
			}
			fmt.Fprintf(w, "  data %d bytes: %q%s\n", len(r.Data), p, more)
		}
		_, err := fmt.Fprintf(w, "  acl %s\n", aclText(r.ACL))
		return err
	})
	if err != nil {
		return err
	}
	if err := sr.end(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nend: %d sessions, %d nodes, %d bytes\n", h.sessions, h.nodes, sr.off)
	return err
}

// msTime shows Unix milliseconds and their UTC time.
func msTime(ms int64) string {
	return fmt.Sprintf("%d (%s)", ms, time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"))
}

func ownerText(owner int64) string {
	switch k := kindOf(owner); k {
	case "persistent":
		return "persistent (ephemeralOwner 0x0)"
	case "container":
		return fmt.Sprintf("container (stored ephemeralOwner 0x%x)", uint64(owner))
	case "ttl":
		return fmt.Sprintf("ttl %dms (stored ephemeralOwner 0x%x)", owner&(1<<40-1), uint64(owner))
	}
	return fmt.Sprintf("ephemeral of session 0x%x", owner)
}

// aclText renders an ACL as zkCli does: scheme:id:perms with perms as
// letters in cdrwa order, entries separated by ", ".
func aclText(acl []wire.ACL) string {
	if len(acl) == 0 {
		return "(none)"
	}
	parts := make([]string, len(acl))
	for i, a := range acl {
		parts[i] = a.ID.Scheme + ":" + a.ID.ID + ":" + a.Perms.Letters()
	}
	return strings.Join(parts, ", ")
}
