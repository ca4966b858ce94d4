package broker

// The line of receives waiting at a queue's leader. A message that
// becomes ready goes to the receive that has waited longest and could
// take it, not to whichever request reaches the queue first: a long poll
// that has waited a second is served before a worker that has just acked
// and asks again at once. Consumers of one queue take turns, as they do
// on a broker that hands messages out round-robin, and which consumer
// gets a message does not hang on the timing of a busy machine.

import "sync"

// receiveLine is the receives waiting on one replica of a queue, oldest
// first.
type receiveLine struct {
	mu      sync.Mutex
	waiting []*lineTicket
	moved   chan struct{} // closed when a receive leaves the line, then replaced
}

// lineTicket is one receive in the line.
type lineTicket struct {
	consumer string
	limit    int
}

// join puts a receive at the back of the line.
func (l *receiveLine) join(consumer string, limit int) *lineTicket {
	t := &lineTicket{consumer: consumer, limit: limit}
	l.mu.Lock()
	l.waiting = append(l.waiting, t)
	l.mu.Unlock()
	return t
}

// leave takes t out of the line and wakes the receives behind it.
func (l *receiveLine) leave(t *lineTicket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.waiting {
		if w == t {
			l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
			break
		}
	}
	if l.moved != nil {
		close(l.moved)
		l.moved = nil
	}
}

// wake returns a channel closed when a receive next leaves the line.
func (l *receiveLine) wake() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.moved == nil {
		l.moved = make(chan struct{})
	}
	return l.moved
}

// ahead says whether a receive older than t could take a message now
// (can answers for a consumer and its in-flight limit): t then waits its
// turn.
func (l *receiveLine) ahead(t *lineTicket, can func(consumer string, limit int) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.waiting {
		if w == t {
			return false
		}
		if can(w.consumer, w.limit) {
			return true
		}
	}
	return false
}
