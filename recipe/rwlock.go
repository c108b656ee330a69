package recipe

import "github.com/wardenzk/warden/client"

// RWLock is a distributed readers-writer lock with Apache Curator's
// InterProcessReadWriteLock layout: both halves queue under one path,
//
//	<path>/_c_<uuid>-__READ__<seq>
//	<path>/_c_<uuid>-__WRIT__<seq>
//
// ordered by sequence across both kinds. A writer holds the lock when its
// node is first and watches only the node just before its own. A reader
// holds the lock when no write node precedes its own and watches only the
// nearest write node before its own (Curator watches the first one; the
// grant rule is the same, and watching the nearest means a reader wakes
// only when it can likely go). The queue is fair: a reader arriving after
// a waiting writer waits for it.
//
// The holder of the write half may also take the read half (Curator's
// downgrade: take write, take read, release write); a reader can never
// upgrade. Caveat (as in Curator): the read node of a downgrade is queued
// when it is taken, so a writer that queued while the write half was held
// gets the lock when the write half is released, before the downgraded
// reader is done. Each half is a Lock, with Lock's rules (not re-entrant, Lost,
// fencing token).
type RWLock struct {
	read, write *Lock
}

// NewRWLock returns a readers-writer lock on path. It makes no request
// until one of its halves is acquired.
func NewRWLock(c *client.Conn, path string, opts ...LockOption) *RWLock {
	w := newLock(c, path, writeName, kindWrite, opts)
	r := newLock(c, path, readName, kindRead, opts)
	r.writer = w
	return &RWLock{read: r, write: w}
}

// ReadLock returns the shared half.
func (rw *RWLock) ReadLock() *Lock { return rw.read }

// WriteLock returns the exclusive half.
func (rw *RWLock) WriteLock() *Lock { return rw.write }
