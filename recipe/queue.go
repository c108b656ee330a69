package recipe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/wardenzk/warden/client"
)

// Queue is a distributed FIFO queue (Curator DistributedQueue): producers
// append items, any number of consumers take them, and every item is taken
// by exactly one consumer.
//
// Algorithm. Put creates a persistent sequential child "queue-" under the
// queue node; the server's sequence suffix orders the items. Take lists the
// children, sorts them by name, and deletes the head with the version it
// read: whoever's delete succeeds owns the item (exactly once); a consumer
// that loses the race (ErrNoNode) tries the next child. Only when the queue
// is empty does a consumer set a children watch and wait for it to fire.
//
// Layout (same as Curator DistributedQueue, so a Java Curator producer or
// consumer can share the queue):
//
//	<path>                       persistent (created with missing ancestors)
//	<path>/queue-0000000000      persistent sequential; data = envelope
//	<path>/queue-0000000001      ...
//
// Children whose name does not start with "queue-" are ignored (Curator
// logs them as foreign nodes).
//
// Envelope (Curator ItemSerializer, big-endian, one node may carry several
// items; Put writes one, PutMulti several):
//
//	+------------+  +------+------------+-----------+       +------+
//	| 0x00010001 |  | 0x01 | int32 size | size bytes| ...   | 0x02 |
//	+------------+  +------+------------+-----------+       +------+
//	   version        one per item                            EOF
//
// The item bytes are opaque: they match a Curator consumer whose
// QueueSerializer is the identity on byte[].
//
// Guarantees and limits. FIFO holds for one consumer; with several, items
// are handed out in order but may be processed out of order. An item taken
// by a consumer that then dies is lost (as in Curator without a lock path).
// Take's delete may be cut by a connection loss: if the retry finds the node
// gone, Take cannot tell whether its own delete or another consumer's won;
// it then returns the item with ErrTakeUncertain so the caller decides.
//
// A Queue value is safe for concurrent use; when a taken node carries
// several items, Take returns the first and keeps the rest for the next
// Take calls on the same Queue value.
type Queue struct {
	q queueCore
}

// ErrTakeUncertain is returned with an item (non-nil data) when the
// connection dropped during the delete that claims it and the node was gone
// on retry: the item may have been taken by another consumer too.
var ErrTakeUncertain = errors.New("recipe: queue: take uncertain after connection loss (item may also have been taken by another consumer)")

// queueItemPrefix is Curator's QUEUE_ITEM_NAME.
const queueItemPrefix = "queue-"

// NewQueue returns the queue rooted at path on c. It does not touch the
// server; the queue node is created by the first Put.
func NewQueue(c *client.Conn, path string) *Queue {
	return &Queue{q: queueCore{c: c, path: path}}
}

// Put appends item to the queue and returns the item node's path.
func (q *Queue) Put(ctx context.Context, item []byte) (string, error) {
	return q.q.put(ctx, queueItemPrefix, [][]byte{item})
}

// PutMulti appends items as one queue node (one Curator "multi item"
// message): a consumer takes all of them together.
func (q *Queue) PutMulti(ctx context.Context, items [][]byte) (string, error) {
	return q.q.put(ctx, queueItemPrefix, items)
}

// Take removes and returns the head item, blocking while the queue is empty
// until an item arrives, ctx ends, or the session ends (ErrSessionExpired,
// ErrClosed).
func (q *Queue) Take(ctx context.Context) ([]byte, error) { return q.q.take(ctx, true) }

// Poll is Take without the wait: ok is false when the queue is empty.
func (q *Queue) Poll(ctx context.Context) (item []byte, ok bool, err error) {
	item, err = q.q.take(ctx, false)
	if errors.Is(err, errQueueEmpty) {
		return nil, false, nil
	}
	return item, err == nil || errors.Is(err, ErrTakeUncertain), err
}

// Len returns the number of item nodes in the queue (a multi-item node
// counts once). It is a snapshot, stale as soon as it returns.
func (q *Queue) Len(ctx context.Context) (int, error) { return q.q.len(ctx) }

// PriorityQueue is a distributed priority queue (Curator
// DistributedPriorityQueue): lower priority numbers come out first, equal
// priorities in FIFO order. Take, exactly-once delivery and the envelope are
// those of Queue.
//
// Layout: the priority is encoded in the node name so that plain string
// order is priority order, then arrival order (the same encoding as Curator,
// so Java and Go processes can share the queue):
//
//	<path>/queue-<s><hhhhhhhh><seq>
//	  s        "0" for a negative priority, "1" otherwise
//	  hhhhhhhh the priority's 32 bits in upper-case hex (two's complement)
//	  seq      the server's 10-digit sequence suffix
//
// e.g. priority 5 → "queue-100000005" + "0000000042"; priority -1 →
// "queue-0FFFFFFFF" + "0000000043". Unlike Curator, which re-sorts only on
// its cache refresh, every Take re-lists the children, so a newly put
// higher-priority item is the next one taken.
type PriorityQueue struct {
	q queueCore
}

// NewPriorityQueue returns the priority queue rooted at path on c. It does
// not touch the server.
func NewPriorityQueue(c *client.Conn, path string) *PriorityQueue {
	return &PriorityQueue{q: queueCore{c: c, path: path}}
}

// Put adds item with the given priority (lower first) and returns the item
// node's path.
func (q *PriorityQueue) Put(ctx context.Context, item []byte, priority int32) (string, error) {
	return q.q.put(ctx, queueItemPrefix+priorityName(priority), [][]byte{item})
}

// Take removes and returns the item with the lowest priority number (the
// oldest among equals), blocking like Queue.Take.
func (q *PriorityQueue) Take(ctx context.Context) ([]byte, error) { return q.q.take(ctx, true) }

// Len returns the number of item nodes in the queue.
func (q *PriorityQueue) Len(ctx context.Context) (int, error) { return q.q.len(ctx) }

// priorityName encodes priority as Curator's priorityToString: a sign digit
// then the 32-bit pattern in 8 upper-case hex digits.
func priorityName(priority int32) string {
	sign := "1"
	if priority < 0 {
		sign = "0"
	}
	return fmt.Sprintf("%s%08X", sign, uint32(priority))
}

// errQueueEmpty is take's answer when wait is false and nothing is queued.
var errQueueEmpty = errors.New("recipe: queue empty")

// queueCore is the shared put/take machinery of Queue and PriorityQueue.
type queueCore struct {
	c    *client.Conn
	path string

	mu sync.Mutex
	// pending holds the items after the first of a multi-item node this
	// value took; they are returned by the next takes, in order.
	pending [][]byte
}

func (q *queueCore) put(ctx context.Context, name string, items [][]byte) (string, error) {
	data := encodeQueueItems(items)
	for {
		p, err := q.c.Create(ctx, path.Join(q.path, name), data, client.PersistentSequential, client.OpenACL)
		if errors.Is(err, client.ErrNoNode) {
			if err := ensureParents(ctx, q.c, q.path); err != nil {
				return "", fmt.Errorf("recipe: queue %s: put: %w", q.path, err)
			}
			continue
		}
		if err != nil {
			// A connection loss may have created the item anyway; a
			// retry could duplicate it, so the caller decides.
			return "", fmt.Errorf("recipe: queue %s: put: %w", q.path, err)
		}
		return p, nil
	}
}

func (q *queueCore) len(ctx context.Context) (int, error) {
	kids, _, err := q.c.Children(ctx, q.path)
	if errors.Is(err, client.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recipe: queue %s: len: %w", q.path, err)
	}
	return len(queueItems(kids)), nil
}

// take claims the head item. With wait false it returns errQueueEmpty
// instead of blocking.
func (q *queueCore) take(ctx context.Context, wait bool) ([]byte, error) {
	q.mu.Lock()
	if len(q.pending) > 0 {
		item := q.pending[0]
		q.pending = q.pending[1:]
		q.mu.Unlock()
		return item, nil
	}
	q.mu.Unlock()
	for {
		kids, _, err := q.c.Children(ctx, q.path)
		if err != nil && !errors.Is(err, client.ErrNoNode) {
			return nil, fmt.Errorf("recipe: queue %s: take: %w", q.path, err)
		}
		for _, name := range queueItems(kids) {
			items, err := q.claim(ctx, path.Join(q.path, name))
			if errors.Is(err, errLostRace) {
				continue
			}
			if err != nil && !errors.Is(err, ErrTakeUncertain) {
				return nil, fmt.Errorf("recipe: queue %s: take: %w", q.path, err)
			}
			return q.first(items), err
		}
		if !wait {
			return nil, errQueueEmpty
		}
		if err := q.waitNonEmpty(ctx); err != nil {
			return nil, fmt.Errorf("recipe: queue %s: take: %w", q.path, err)
		}
	}
}

// first returns items[0] and keeps the rest for later takes.
func (q *queueCore) first(items [][]byte) []byte {
	if len(items) == 0 {
		return []byte{} // a Curator message with no items: an empty item
	}
	if len(items) > 1 {
		q.mu.Lock()
		q.pending = append(q.pending, items[1:]...)
		q.mu.Unlock()
	}
	return items[0]
}

// errLostRace means another consumer took the node first.
var errLostRace = errors.New("recipe: queue item taken by another consumer")

// claim reads the item node and deletes it with the version read. It
// returns errLostRace when another consumer deleted it first.
func (q *queueCore) claim(ctx context.Context, p string) ([][]byte, error) {
	var data []byte
	var st client.Stat
	for {
		var err error
		data, st, err = q.c.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			return nil, errLostRace
		}
		if errors.Is(err, client.ErrConnectionLoss) {
			continue // a read: safe to repeat
		}
		if err != nil {
			return nil, err
		}
		break
	}
	items, decErr := decodeQueueItems(data)
	if decErr != nil {
		// Curator drops a corrupted message after deleting it; we hand
		// the raw bytes to the caller instead of losing them silently.
		items = [][]byte{data}
	}
	uncertain := false
	for {
		err := q.c.Delete(ctx, p, st.Version)
		switch {
		case err == nil:
			return items, nil // a retry that succeeds still means ours
		case errors.Is(err, client.ErrConnectionLoss):
			uncertain = true
			continue
		case errors.Is(err, client.ErrNoNode), errors.Is(err, client.ErrBadVersion):
			if uncertain {
				return items, ErrTakeUncertain
			}
			return nil, errLostRace
		default:
			return nil, err
		}
	}
}

// waitNonEmpty sets a children watch and returns once the queue has an item
// or the watch fires.
func (q *queueCore) waitNonEmpty(ctx context.Context) error {
	for {
		kids, _, ch, err := q.c.ChildrenW(ctx, q.path)
		if errors.Is(err, client.ErrNoNode) {
			// No queue node yet: wait for its creation instead.
			_, ok, ech, err := q.c.ExistsW(ctx, q.path)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			ch = ech
		} else if err != nil {
			if errors.Is(err, client.ErrConnectionLoss) {
				continue
			}
			return err
		} else if len(queueItems(kids)) > 0 {
			return nil
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return ev.Err
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// queueItems returns the item children in take order (string order, which
// is sequence order for Queue and priority-then-sequence for PriorityQueue).
func queueItems(kids []string) []string {
	out := kids[:0:0]
	for _, k := range kids {
		if strings.HasPrefix(k, queueItemPrefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Curator ItemSerializer constants.
const (
	queueEnvelopeVersion = 0x00010001
	queueOpItem          = 0x01
	queueOpEOF           = 0x02
)

// encodeQueueItems builds a Curator multi-item envelope.
func encodeQueueItems(items [][]byte) []byte {
	n := 4 + 1
	for _, it := range items {
		n += 5 + len(it)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, queueEnvelopeVersion)
	for _, it := range items {
		b = append(b, queueOpItem)
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return append(b, queueOpEOF)
}

// decodeQueueItems parses a Curator multi-item envelope.
func decodeQueueItems(b []byte) ([][]byte, error) {
	if len(b) < 4 || binary.BigEndian.Uint32(b) != queueEnvelopeVersion {
		return nil, errors.New("recipe: queue item: bad envelope version")
	}
	b = b[4:]
	var items [][]byte
	for {
		if len(b) == 0 {
			return nil, errors.New("recipe: queue item: missing EOF")
		}
		op := b[0]
		b = b[1:]
		switch op {
		case queueOpEOF:
			return items, nil
		case queueOpItem:
			if len(b) < 4 {
				return nil, errors.New("recipe: queue item: truncated size")
			}
			size := binary.BigEndian.Uint32(b)
			b = b[4:]
			if size > 1<<31-1 || size > uint32(len(b)) {
				return nil, errors.New("recipe: queue item: truncated item")
			}
			items = append(items, b[:size:size])
			b = b[size:]
		default:
			return nil, fmt.Errorf("recipe: queue item: bad opcode %#x", op)
		}
	}
}
