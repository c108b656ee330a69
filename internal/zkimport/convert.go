package zkimport

import (
	"github.com/wardenzk/warden/internal/fsm"
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

// Tree builds Warden's tree of the database (tree.FromRecords). The tree
// shares the database's data and ACL slices: neither may change afterwards.
func (db *DB) Tree(opts tree.Options) (*tree.Tree, error) {
	return tree.FromRecords(opts, db.Records)
}

// FSMSessions returns the session table as Warden replicates it: each
// session with its timeout and the password ZooKeeper gave it.
func (db *DB) FSMSessions() map[fsm.SessionID]fsm.Session {
	out := make(map[fsm.SessionID]fsm.Session, len(db.Sessions))
	for id, to := range db.Sessions {
		out[fsm.SessionID(id)] = fsm.Session{Timeout: to, Passwd: Password(id), Owner: fsm.NoOwner}
	}
	return out
}

// ZxidState splits the database's zxid into ZooKeeper's epoch (high 32
// bits) and counter (low 32 bits); Warden continues from there.
func (db *DB) ZxidState() (epoch, counter uint32) {
	return uint32(uint64(db.LastZxid) >> 32), uint32(db.LastZxid)
}
