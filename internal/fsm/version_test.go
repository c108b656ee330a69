package fsm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wardenzk/warden/wire"
)

// TestRestoreNewerVersion: a stream of a version this build does not know
// is refused as written by a newer Warden, not as damage, and the error
// says which versions this build reads.
func TestRestoreNewerVersion(t *testing.T) {
	newer := newStream(snapMagic, snapVersion+1).header(hdr(0, 4)).reserved().end(0, 4).bytes()
	_, err := Restore(Options{}, bytes.NewReader(newer))
	if !errors.Is(err, ErrNewerSnapshot) || errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("err = %v; want ErrNewerSnapshot, not ErrBadSnapshot", err)
	}
	for _, want := range []string{fmt.Sprintf("format version %d", snapVersion+1), fmt.Sprintf("reads versions 1 to %d", snapVersion), "or a later one"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := InspectSnapshot(bytes.NewReader(newer)); !errors.Is(err, ErrNewerSnapshot) {
		t.Errorf("InspectSnapshot: %v, want ErrNewerSnapshot", err)
	}
}

// TestEntryVersions: every op a server proposes is of a known version and
// round-trips; an entry of a newer version, alone or in a batch, is
// refused with ErrNewerEntry naming the versions; an op its version does
// not have is refused.
func TestEntryVersions(t *testing.T) {
	for op, v := range entryOps {
		if v < entryVersion1 || v > EntryVersion || v == batchVersion {
			t.Errorf("op %d: entry version %d is outside 1..%d or the batch marker", op, v, EntryVersion)
		}
		data := wire.Marshal(&Entry{Op: op, Session: 3})
		if data[0] != v {
			t.Errorf("op %d encodes with version %d, want %d", op, data[0], v)
		}
		got, err := DecodeEntries(data, 0)
		if err != nil || len(got) != 1 || got[0].Op != op {
			t.Errorf("op %d: decoded %+v, %v", op, got, err)
		}
	}

	create := wire.Marshal(&Entry{Op: wire.OpCreate, Session: 3})
	newer := bytes.Clone(create)
	newer[0] = EntryVersion + 2 // the next free version (EntryVersion+1 may be the batch marker)
	if newer[0] == batchVersion {
		newer[0]++
	}
	for name, data := range map[string][]byte{
		"alone":   newer,
		"batched": EncodeBatch([][]byte{create, newer}),
	} {
		_, err := DecodeEntries(data, 0)
		if !errors.Is(err, ErrNewerEntry) {
			t.Errorf("%s: err = %v, want ErrNewerEntry", name, err)
			continue
		}
		if want := fmt.Sprintf("applies versions up to %d; upgrade this member", EntryVersion); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not say %q", name, err, want)
		}
	}

	for name, op := range map[string]wire.OpCode{"read op": wire.OpGetData, "unknown op": 77, "unknown server op": -1999} {
		data := wire.Marshal(&Entry{Op: op})
		if _, err := DecodeEntries(data, 0); err == nil || errors.Is(err, ErrNewerEntry) ||
			!strings.Contains(err.Error(), "not an op of that version") {
			t.Errorf("%s %d: err = %v, want an op not of its version", name, op, err)
		}
	}
	if _, err := DecodeEntries([]byte{0, 0, 0, 0, 1}, 0); err == nil || errors.Is(err, ErrNewerEntry) {
		t.Errorf("version 0: err = %v, want an unknown version", err)
	}
}
