package replica

import (
	"errors"
	"sync"
)

// ErrStopped is returned by Propose after Stop.
var ErrStopped = errors.New("replica: stopped")

// ApplyFunc receives committed entries: index grows by one per call, term
// is the raft term the entry was proposed in. It is called from a single
// goroutine and must not retain data after it returns.
type ApplyFunc func(index, term uint64, data []byte)

// standaloneTerm is the term of every entry of a standalone log: one
// member, elected once.
const standaloneTerm = 1

// Standalone is a single-member log that commits proposals in the order
// Propose is called.
type Standalone struct {
	apply ApplyFunc

	mu sync.Mutex
	// Invariant: queue holds proposals not yet applied, in proposal order.
	queue   [][]byte
	stopped bool

	wake chan struct{}
	done chan struct{}
}

// NewStandalone starts a standalone log that calls apply for every
// committed entry.
func NewStandalone(apply ApplyFunc) *Standalone {
	s := &Standalone{apply: apply, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	return s
}

// Propose queues data for the log. The entry is applied later, after every
// entry proposed before it. Propose never blocks on apply.
func (s *Standalone) Propose(data []byte) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return ErrStopped
	}
	s.queue = append(s.queue, data)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// Stop applies what is queued, then stops; later proposals fail.
func (s *Standalone) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
}

func (s *Standalone) run() {
	defer close(s.done)
	var index uint64
	var batch [][]byte
	for range s.wake {
		s.mu.Lock()
		batch, s.queue = s.queue, batch[:0]
		stopped := s.stopped
		s.mu.Unlock()
		for _, data := range batch {
			index++
			s.apply(index, standaloneTerm, data)
		}
		clear(batch)
		if stopped {
			s.mu.Lock()
			rest := len(s.queue)
			s.mu.Unlock()
			if rest == 0 {
				return
			}
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}
