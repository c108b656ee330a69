package storage

import (
	"math/rand/v2"
	"os"
	"testing"
)

func TestMemFSCrash(t *testing.T) {
	write := func(t *testing.T, m *MemFS, name, data string, sync bool) File {
		f, err := m.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
	contents := func(m *MemFS, name string) string {
		f, err := m.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			return "<missing>"
		}
		defer f.Close()
		fi, _ := f.Stat()
		b := make([]byte, fi.Size())
		f.ReadAt(b, 0)
		return string(b)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, m *MemFS)
		want map[string]string
	}{
		{"unsynced file entry is lost", func(t *testing.T, m *MemFS) {
			write(t, m, "/a", "x", true)
		}, map[string]string{"/a": "<missing>"}},
		{"synced file and entry survive", func(t *testing.T, m *MemFS) {
			write(t, m, "/a", "x", true)
			m.SyncDir("/")
		}, map[string]string{"/a": "x"}},
		{"unsynced write is lost", func(t *testing.T, m *MemFS) {
			f := write(t, m, "/a", "x", true)
			m.SyncDir("/")
			f.Write([]byte("yz"))
		}, map[string]string{"/a": "x"}},
		{"datasync makes writes durable as sync does", func(t *testing.T, m *MemFS) {
			f := write(t, m, "/a", "x", true)
			m.SyncDir("/")
			f.Write([]byte("yz"))
			f.Datasync()
			f.Write([]byte("lost"))
		}, map[string]string{"/a": "xyz"}},
		{"rename without SyncDir is undone", func(t *testing.T, m *MemFS) {
			write(t, m, "/a", "x", true)
			m.SyncDir("/")
			m.Rename("/a", "/b")
		}, map[string]string{"/a": "x", "/b": "<missing>"}},
		{"rename with SyncDir", func(t *testing.T, m *MemFS) {
			write(t, m, "/a", "x", true)
			m.SyncDir("/")
			m.Rename("/a", "/b")
			m.SyncDir("/")
		}, map[string]string{"/a": "<missing>", "/b": "x"}},
		{"file in an unsynced directory is lost", func(t *testing.T, m *MemFS) {
			m.MkdirAll("/d", 0o755)
			write(t, m, "/d/a", "x", true)
			m.SyncDir("/d")
		}, map[string]string{"/d/a": "<missing>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemFS()
			tt.run(t, m)
			m.Crash()
			for name, want := range tt.want {
				if got := contents(m, name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
		})
	}
}

func TestMemFSCrashTornKeepsAPrefix(t *testing.T) {
	for seed := range uint64(50) {
		m := NewMemFS()
		f, _ := m.OpenFile("/a", os.O_CREATE|os.O_RDWR, 0o644)
		f.Sync()
		m.SyncDir("/")
		f.Write([]byte("abc"))
		f.Write([]byte("defgh"))
		m.CrashTorn(rand.New(rand.NewPCG(seed, 1)))
		g, err := m.OpenFile("/a", os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 16)
		n, _ := g.ReadAt(b, 0)
		if got := string(b[:n]); got != "abcdefgh"[:n] {
			t.Fatalf("seed %d: %q is not a prefix of the writes", seed, got)
		}
		if _, err := f.Write([]byte("x")); err == nil {
			t.Fatal("a file opened before the crash still works")
		}
	}
}
