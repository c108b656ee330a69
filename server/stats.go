package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenzk/warden/wire"
)

// latency keeps min/avg/max of request latencies in milliseconds.
type latency struct {
	mu sync.Mutex
	// Invariant: count == 0 implies min == max == sum == 0.
	min, max, sum, count int64
}

func (l *latency) add(ms int64) {
	l.mu.Lock()
	if l.count == 0 || ms < l.min {
		l.min = ms
	}
	if ms > l.max {
		l.max = ms
	}
	l.sum += ms
	l.count++
	l.mu.Unlock()
}

func (l *latency) get() (min int64, avg float64, max int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count > 0 {
		avg = float64(l.sum) / float64(l.count)
	}
	return l.min, avg, l.max
}

func (l *latency) reset() {
	l.mu.Lock()
	l.min, l.max, l.sum, l.count = 0, 0, 0, 0
	l.mu.Unlock()
}

// bufferSizes keeps the last, smallest and largest size of something in
// bytes, -1 before the first (ZooKeeper's BufferStats).
type bufferSizes struct {
	mu sync.Mutex
	// Invariant: all three are -1, or none is.
	last, min, max int
}

func newBufferSizes() bufferSizes { return bufferSizes{last: -1, min: -1, max: -1} }

func (b *bufferSizes) add(n int) {
	b.mu.Lock()
	b.last = n
	if b.min < 0 || n < b.min {
		b.min = n
	}
	b.max = max(b.max, n)
	b.mu.Unlock()
}

func (b *bufferSizes) get() (last, lo, hi int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last, b.min, b.max
}

func (b *bufferSizes) reset() {
	b.mu.Lock()
	b.last, b.min, b.max = -1, -1, -1
	b.mu.Unlock()
}

// serverStats are the counters behind srvr, stat and mntr.
type serverStats struct {
	received, sent, rejected, authFailed, expired, watchEvents, throttled atomic.Int64
	// nonMTLSRemote and nonMTLSLocal count the connections accepted on a
	// plaintext-only client port, from other hosts and from loopback, as
	// ZooKeeper's non_mtls_remote_conn_count and non_mtls_local_conn_count.
	nonMTLSRemote, nonMTLSLocal atomic.Int64
	lat                         latency
	// responses are the sizes of the replies and events sent to clients
	// (ZooKeeper's client_response stats).
	responses bufferSizes
}

func (s *serverStats) observe(d time.Duration) { s.lat.add(d.Milliseconds()) }

func (s *serverStats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.lat.reset()
	s.responses.reset()
}

// connStats are one connection's counters for cons and stat.
type connStats struct {
	received, sent atomic.Int64
	lastOp         atomic.Int32 // a wire.OpCode; opShort names it
	lastCxid       atomic.Int32
	lastZxid       atomic.Int64
	lastResponse   atomic.Int64 // Unix ms
	lastLatency    atomic.Int64 // ms
	lat            latency
}

func (s *connStats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.lastOp.Store(int32(opNone))
	s.lastCxid.Store(-1)
	s.lastZxid.Store(-1)
	s.lastResponse.Store(0)
	s.lastLatency.Store(0)
	s.lat.reset()
}

func (s *connStats) observe(r *reply, now time.Time) {
	ms := now.Sub(r.start).Milliseconds()
	s.lastLatency.Store(ms)
	s.lastResponse.Store(now.UnixMilli())
	s.lat.add(ms)
}

// opNone is lastOp before any request: opShort names it NA, as it names
// every code it does not know.
const opNone wire.OpCode = 0

// opShort is the abbreviation cons shows for the last operation, as
// ZooKeeper names them.
func opShort(op wire.OpCode) string {
	switch op {
	case wire.OpCreateSession:
		return "SESS"
	case wire.OpPing:
		return "PING"
	case wire.OpMulti:
		return "MULT"
	case wire.OpMultiRead:
		return "MLTR"
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return "CREA"
	case wire.OpDelete, wire.OpDeleteContainer:
		return "DELE"
	case wire.OpSetData:
		return "SETD"
	case wire.OpReconfig:
		return "RECO"
	case wire.OpSetACL:
		return "SETA"
	case wire.OpCloseSession:
		return "CLOS"
	case wire.OpSync:
		return "SYNC"
	case wire.OpCheck:
		return "CHEC"
	case wire.OpExists:
		return "EXIS"
	case wire.OpGetData:
		return "GETD"
	case wire.OpSetWatches:
		return "SETW"
	case wire.OpSetWatches2:
		return "STW2"
	case wire.OpAddWatch:
		return "ADDW"
	case wire.OpGetACL:
		return "GETA"
	case wire.OpGetChildren, wire.OpGetChildren2:
		return "GETC"
	case wire.OpGetAllChildrenNumber:
		return "GETACN"
	case wire.OpCheckWatches:
		return "CHKW"
	case wire.OpRemoveWatches:
		return "REMW"
	case wire.OpWhoAmI:
		return "HOMI"
	case wire.OpGetEphemerals:
		return "GETE"
	}
	return "NA"
}

// javaDouble formats f as Java's Double.toString does for the small,
// 4-decimal-rounded values ZooKeeper prints ("0.0", "0.7561").
func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', 4, 64)
	for len(s) > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s += "0"
	}
	return s
}
