package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const snapDir = "/data/version-2"

func body(index uint64) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("state at %d; ", index), 1000))
}

func mustSaveSnap(t testing.TB, s *Snapshotter, index uint64) {
	t.Helper()
	if err := s.Save(snapMeta(index, 1), func(w io.Writer) error {
		_, err := w.Write(body(index))
		return err
	}); err != nil {
		t.Fatalf("Save(%d): %v", index, err)
	}
}

// loadNewest returns the loaded metadata and body.
func loadNewest(s *Snapshotter) (*raftpb.SnapshotMetadata, []byte, error) {
	var got []byte
	meta, err := s.LoadNewest(func(meta *raftpb.SnapshotMetadata, r io.Reader) error {
		var err error
		got, err = io.ReadAll(r)
		return err
	})
	return meta, got, err
}

func TestSnapshotSaveLoad(t *testing.T) {
	fs := NewMemFS()
	s := NewSnapshotter(fs, snapDir, 3, quietLogger())
	if _, _, err := loadNewest(s); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("LoadNewest of nothing: %v, want ErrNoSnapshot", err)
	}
	for i := uint64(10); i <= 50; i += 10 {
		mustSaveSnap(t, s, i)
	}
	fs.Crash()
	meta, got, err := loadNewest(s)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(meta, snapMeta(50, 1)) || !bytes.Equal(got, body(50)) {
		t.Fatalf("loaded %v with %d bytes", meta, len(got))
	}
	infos, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var idx []uint64
	for _, in := range infos {
		idx = append(idx, in.Index)
		if in.Size >= int64(len(body(in.Index))) {
			t.Errorf("%s is not compressed: %d bytes", in.Path, in.Size)
		}
	}
	if fmt.Sprint(idx) != "[30 40 50]" {
		t.Fatalf("retained %v, want [30 40 50]", idx)
	}
}

func TestSnapshotRetainMinimum(t *testing.T) {
	s := NewSnapshotter(NewMemFS(), snapDir, 1, quietLogger())
	for i := uint64(1); i <= 5; i++ {
		mustSaveSnap(t, s, i)
	}
	if infos, _ := s.List(); len(infos) != MinSnapRetain {
		t.Fatalf("kept %d snapshots, want %d", len(infos), MinSnapRetain)
	}
}

func TestSnapshotDamagedNewest(t *testing.T) {
	tests := []struct {
		name   string
		damage func(data []byte) []byte
	}{
		{"flipped body byte", func(d []byte) []byte { d[len(d)/2] ^= 1; return d }},
		{"flipped checksum", func(d []byte) []byte { d[len(d)-1] ^= 1; return d }},
		{"truncated", func(d []byte) []byte { return d[:len(d)-10] }},
		{"empty", func(d []byte) []byte { return nil }},
		{"bad magic", func(d []byte) []byte { d[0] = 'X'; return d }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewMemFS()
			log, logs := testLogger()
			s := NewSnapshotter(fs, snapDir, 3, log)
			mustSaveSnap(t, s, 10)
			mustSaveSnap(t, s, 20)
			newest := filepath.Join(snapDir, snapName(1, 20))
			writeFile(t, fs, newest, tt.damage(readFile(t, fs, newest)))
			meta, got, err := loadNewest(s)
			if err != nil {
				t.Fatal(err)
			}
			if meta.GetIndex() != 10 || !bytes.Equal(got, body(10)) {
				t.Fatalf("loaded index %d, want the older snapshot 10", meta.GetIndex())
			}
			if !strings.Contains(logs.String(), "damaged") || !strings.Contains(logs.String(), newest) {
				t.Fatalf("no log line naming the damaged file: %q", logs.String())
			}
		})
	}
}

func TestSnapshotAllDamaged(t *testing.T) {
	fs := NewMemFS()
	s := NewSnapshotter(fs, snapDir, 3, quietLogger())
	mustSaveSnap(t, s, 10)
	p := filepath.Join(snapDir, snapName(1, 10))
	writeFile(t, fs, p, []byte("garbage"))
	_, _, err := loadNewest(s)
	if err == nil || errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("LoadNewest with only damaged snapshots: %v, want an error other than ErrNoSnapshot", err)
	}
	asCorrupt(t, err)
}

func TestSnapshotWriteErrorLeavesNothing(t *testing.T) {
	fs := NewMemFS()
	s := NewSnapshotter(fs, snapDir, 3, quietLogger())
	mustSaveSnap(t, s, 10)
	boom := errors.New("boom")
	if err := s.Save(snapMeta(20, 1), func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Save: %v, want the write function's error", err)
	}
	fs.InjectFault(OpWrite, 1, syscall.ENOSPC)
	if err := s.Save(snapMeta(30, 1), func(w io.Writer) error {
		_, err := w.Write(body(30))
		return err
	}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Save on a full disk: %v, want ErrDiskFull", err)
	}
	names, _ := fs.ReadDir(snapDir)
	if len(names) != 1 {
		t.Fatalf("files left behind: %v", names)
	}
}

// TestSnapshotCrashDuringSave cuts the power at every file operation of a
// Save: the previous snapshot stays loadable, and the new one is loadable
// if Save returned.
func TestSnapshotCrashDuringSave(t *testing.T) {
	setup := func() (*MemFS, *Snapshotter) {
		fs := NewMemFS()
		s := NewSnapshotter(fs, snapDir, 3, quietLogger())
		for i := uint64(10); i <= 30; i += 10 {
			mustSaveSnap(t, s, i)
		}
		return fs, s
	}
	fs, s := setup()
	start := fs.Ops()
	mustSaveSnap(t, s, 40)
	total := fs.Ops() - start
	for n := 0; n <= total; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			fs, s := setup()
			fs.StopAfter(n)
			err := s.Save(snapMeta(40, 1), func(w io.Writer) error {
				_, err := w.Write(body(40))
				return err
			})
			fs.Crash()
			meta, got, lerr := loadNewest(s)
			if lerr != nil {
				t.Fatalf("LoadNewest after crash: %v", lerr)
			}
			if err == nil && meta.GetIndex() != 40 {
				t.Fatalf("Save returned nil but LoadNewest found %d", meta.GetIndex())
			}
			if meta.GetIndex() < 30 || !bytes.Equal(got, body(meta.GetIndex())) {
				t.Fatalf("loaded %d", meta.GetIndex())
			}
			names, _ := fs.ReadDir(snapDir)
			for _, n := range names {
				if strings.HasSuffix(n, ".tmp") {
					t.Fatalf("temporary file left after LoadNewest: %v", names)
				}
			}
		})
	}
}
