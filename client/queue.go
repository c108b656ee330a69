package client

import "sync"

// queueBuffer is the capacity of a queue's output channel: what a
// consumer can still read after the Conn is closed.
const queueBuffer = 64

// queue is an unbounded FIFO from producers that must never block (the
// read loop, the session loop) to a consumer reading out. One pump
// goroutine moves items; it exits when the queue is ended and drained, or
// when stop closes, after moving what fits into out's buffer without
// blocking. out is closed when the pump exits.
type queue[T any] struct {
	out  chan T
	wake chan struct{} // capacity 1: "items or ended changed"

	mu    sync.Mutex
	items []T
	ended bool // Invariant: no push after ended.
}

// newQueue starts the pump; wg tracks it.
func newQueue[T any](stop <-chan struct{}, wg *sync.WaitGroup) *queue[T] {
	q := &queue[T]{out: make(chan T, queueBuffer), wake: make(chan struct{}, 1)}
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.pump(stop)
	}()
	return q
}

// push appends v; it never blocks. Pushes after end are dropped.
func (q *queue[T]) push(v T) {
	q.mu.Lock()
	if q.ended {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
}

// end marks the queue finished: out closes once the items are delivered.
func (q *queue[T]) end() {
	q.mu.Lock()
	q.ended = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue[T]) pump(stop <-chan struct{}) {
	defer close(q.out)
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			ended := q.ended
			q.mu.Unlock()
			if ended {
				return
			}
			select {
			case <-q.wake:
				continue
			case <-stop:
				q.flush()
				return
			}
		}
		v := q.items[0]
		var zero T
		q.items[0] = zero
		q.items = q.items[1:]
		q.mu.Unlock()
		select {
		case q.out <- v:
		case <-stop:
			q.mu.Lock()
			q.items = append([]T{v}, q.items...)
			q.mu.Unlock()
			q.flush()
			return
		}
	}
}

// flush moves what fits into out without blocking and drops the rest.
func (q *queue[T]) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, v := range q.items {
		select {
		case q.out <- v:
		default:
			q.items = nil
			return
		}
	}
	q.items = nil
}

// broadcaster fans session events out to every subscriber, each through
// its own unbounded queue, so one slow reader delays nobody.
type broadcaster struct {
	stop <-chan struct{}
	wg   *sync.WaitGroup

	mu sync.Mutex
	// Invariant: after ended, no queue is added and none is pushed to.
	subs  []*queue[SessionEvent]
	ended bool
	// last is the latest event (the current state); hasLast says whether
	// there was one.
	last    SessionEvent
	hasLast bool
}

func newBroadcaster(stop <-chan struct{}, wg *sync.WaitGroup) *broadcaster {
	return &broadcaster{stop: stop, wg: wg}
}

// subscribe returns a channel that first receives the latest event (the
// current state) and then every later one; it is closed after the
// terminal event. After the end it holds just the terminal event.
func (b *broadcaster) subscribe() <-chan SessionEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		ch := make(chan SessionEvent, 1)
		if b.hasLast {
			ch <- b.last
		}
		close(ch)
		return ch
	}
	q := newQueue[SessionEvent](b.stop, b.wg)
	if b.hasLast {
		q.push(b.last)
	}
	b.subs = append(b.subs, q)
	return q.out
}

func (b *broadcaster) push(ev SessionEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.last, b.hasLast = ev, true
	for _, q := range b.subs {
		q.push(ev)
	}
}

// end delivers nothing more: every subscription closes once drained.
func (b *broadcaster) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	for _, q := range b.subs {
		q.end()
	}
}
