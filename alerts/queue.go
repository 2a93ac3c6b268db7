package alerts

import (
	"context"
	"sync"
)

// queue is a bounded FIFO of batches that drops its oldest batch when full,
// so a producer never blocks.
type queue struct {
	mu     sync.Mutex // guards items and closed
	items  [][]Alert
	closed bool
	bound  int
	ready  chan struct{} // holds a token while items may be non-empty or closed
}

func newQueue(bound int) *queue {
	return &queue{bound: bound, ready: make(chan struct{}, 1)}
}

// push appends batch, dropping the oldest when full; it returns how many
// batches were dropped (0 or 1), or -1 when the queue is closed.
func (q *queue) push(batch []Alert) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return -1
	}
	dropped := 0
	if len(q.items) >= q.bound {
		q.items[0] = nil
		q.items = q.items[1:]
		dropped = 1
	}
	q.items = append(q.items, batch)
	q.signal()
	return dropped
}

// pop waits for a batch. ok is false when the queue is closed and empty, or
// ctx is done (whatever is left stays queued).
func (q *queue) pop(ctx context.Context) (batch []Alert, ok bool) {
	for {
		if ctx.Err() != nil {
			return nil, false
		}
		q.mu.Lock()
		if len(q.items) > 0 {
			batch = q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			if len(q.items) > 0 {
				q.signal()
			}
			q.mu.Unlock()
			return batch, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// close makes pop return false once the queue is empty.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.signal()
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// signal leaves a token for pop; called with mu held.
func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
