package replica

import "go.etcd.io/raft/v3/raftpb"

// logSize follows the payload bytes of the entries in the in-memory log
// (raft.MemoryStorage), as the loop appends, truncates, compacts and
// replaces it, so the host can bound the log by bytes. It is owned by the
// loop goroutine.
type logSize struct {
	// first is the index of sizes[0]; sizes are the data sizes of the
	// entries first, first+1, ... Invariant: total == Σ sizes.
	first uint64
	sizes []uint64
	total uint64
}

// reset empties the log: it now starts after index (a snapshot).
func (l *logSize) reset(index uint64) {
	l.first, l.sizes, l.total = index+1, nil, 0
}

// append records ents, which follow or overwrite the log's tail, as
// raft.MemoryStorage.Append does.
func (l *logSize) append(ents []*raftpb.Entry) {
	if len(ents) == 0 {
		return
	}
	at := ents[0].GetIndex()
	if at < l.first { // entries before the log's start are ignored by the storage
		skip := l.first - at
		if skip >= uint64(len(ents)) {
			return
		}
		ents, at = ents[skip:], l.first
	}
	if keep := at - l.first; keep < uint64(len(l.sizes)) {
		for _, s := range l.sizes[keep:] {
			l.total -= s
		}
		l.sizes = l.sizes[:keep]
	}
	for _, e := range ents {
		s := uint64(len(e.GetData()))
		l.sizes = append(l.sizes, s)
		l.total += s
	}
}

// compact forgets the entries up to and including index.
func (l *logSize) compact(index uint64) {
	if index < l.first {
		return
	}
	drop := min(index-l.first+1, uint64(len(l.sizes)))
	for _, s := range l.sizes[:drop] {
		l.total -= s
	}
	l.sizes = l.sizes[drop:]
	l.first += drop
	if cap(l.sizes) > 1024 && len(l.sizes) < cap(l.sizes)/4 {
		l.sizes = append([]uint64(nil), l.sizes...) // give the dropped prefix back
	}
}

// after returns the bytes of the entries above index.
func (l *logSize) after(index uint64) uint64 {
	if index < l.first {
		return l.total
	}
	var n uint64
	if k := index - l.first + 1; k < uint64(len(l.sizes)) {
		for _, s := range l.sizes[k:] {
			n += s
		}
	}
	return n
}

// keeping returns the index behind which the log holds at most tail
// bytes: the largest index whose after() is at most tail (first-1 when
// every entry is needed to make tail).
func (l *logSize) keeping(tail uint64) uint64 {
	var n uint64
	i := len(l.sizes)
	for i > 0 && n+l.sizes[i-1] <= tail {
		n += l.sizes[i-1]
		i--
	}
	return l.first + uint64(i) - 1
}
