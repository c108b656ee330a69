package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

// FuzzImport imports arbitrary documents (the file `import` reads) under
// /imp on an in-process server: no panic, an answer within the timeout,
// and after a successful import every node of the document exists. The
// shell works afterwards.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"format": "warden-export/1", "root": {"name": "/x", "data": "hello", "encoding": "utf8", "children": [
		{"name": "a", "data": "AAEC", "encoding": "base64", "acl": [{"scheme": "world", "id": "anyone", "perms": "cdrwa"}]},
		{"name": "b", "children": [{"name": "c", "data": null}]}]}}`))
	f.Add([]byte(`{"format": "warden-export/1", "root": {"name": "/", "children": [{"name": "d", "acl": [{"scheme": "ip", "id": "127.0.0.1", "perms": "r,w:a"}]}]}}`))
	f.Add([]byte(`{"format": "warden-export/1", "root": {"name": "/x", "data": "!!", "encoding": "base64"}}`))
	f.Add([]byte(`{"format": "warden-export/1", "root": {"name": "/x", "children": [{"name": "a/b"}, {"name": ""}, {"name": ".."}]}}`))
	f.Add([]byte(`{"format": "other", "root": {}}`))

	srv := servertest.Start(f, servertest.WithConfig(func(c *server.Config) { c.ExtendedTypesEnabled = true }))
	sh := New(Config{Servers: srv.Addr().String(), Timeout: 10 * time.Second, Out: io.Discard, Err: io.Discard, Version: "test"})
	if err := sh.Connect(context.Background(), ""); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { sh.Close() })
	file := filepath.Join(f.TempDir(), "doc.json")

	f.Fuzz(func(t *testing.T, doc []byte) {
		if err := os.WriteFile(file, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		defer sh.Run(ctx, []string{"deleteall", "/imp"})
		err := sh.Run(ctx, []string{"import", file, "/imp"})
		if ctx.Err() != nil {
			t.Fatalf("import did not end within its timeout: %v", err)
		}
		if err == nil {
			var d exportFile
			if err := json.Unmarshal(doc, &d); err != nil {
				t.Fatalf("imported a document that does not decode: %v", err)
			}
			var check func(p string, n *treeNode)
			check = func(p string, n *treeNode) {
				// NoAuth: the node is there, with an ACL that does not let
				// us read it (an ACL without perms imports as no perms).
				if _, ok, err := sh.Conn().Exists(ctx, p); !errors.Is(err, client.ErrNoAuth) && (err != nil || !ok) {
					t.Fatalf("imported, but %s is missing: %v", p, err)
				}
				for _, k := range n.Children {
					check(join(p, k.Name), k)
				}
			}
			check("/imp", d.Root)
		}
		if _, _, err := sh.Conn().Get(ctx, "/"); err != nil && !errors.Is(err, client.ErrNoAuth) {
			t.Fatalf("the shell's connection is unwell: %v", err)
		}
	})
}
