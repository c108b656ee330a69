package zkimport

import (
	"github.com/wardenzk/warden/internal/tree"
)

// Records calls yield with every node as a tree.NodeRecord, parents before
// children (sorted path order), stopping at the first error. It has the
// shape tree.FromRecords takes.
func (db *DB) Records(yield func(tree.NodeRecord) error) error {
	for _, p := range db.Paths() {
		n := db.Nodes[p]
		r := tree.NodeRecord{
			Path:           p,
			Data:           n.Data,
			ACL:            n.ACL,
			Czxid:          n.Stat.Czxid,
			Mzxid:          n.Stat.Mzxid,
			Ctime:          n.Stat.Ctime,
			Mtime:          n.Stat.Mtime,
			Version:        n.Stat.Version,
			StoredCversion: n.Stat.Cversion,
			Aversion:       n.Stat.Aversion,
			EphemeralOwner: n.Stat.EphemeralOwner,
			Pzxid:          n.Stat.Pzxid,
		}
		if err := yield(r); err != nil {
			return err
		}
	}
	return nil
}
