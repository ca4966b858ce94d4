package broker

// The line of receives waiting at a queue's leader. A message that
// becomes ready goes to the receive that has waited longest and could
// take it, not to whichever request reaches the queue first: a long poll
// that has waited a second is served before a worker that has just acked
// and asks again at once. Consumers of one queue take turns, as they do
// on a broker that hands messages out round-robin, and which consumer
// gets a message does not hang on the timing of a busy machine.
//
// A consumer keeps its place between its polls: a long poll that ends
// empty is followed by the next within moments, and that one takes the
// place of the first rather than the back of the line.

import (
	"slices"
	"sync"
	"time"
)

// keepPlace is how long a consumer's place is kept after a receive that
// got nothing: longer than the gap between two polls of one consumer.
const keepPlace = time.Second

// receiveLine is the receives waiting on one replica of a queue, oldest
// first.
type receiveLine struct {
	mu      sync.Mutex
	waiting []*lineTicket // by place
	last    uint64        // the last place given
	kept    map[string]keptPlace
	moved   chan struct{} // closed when a receive leaves the line, then replaced
}

// lineTicket is one receive in the line.
type lineTicket struct {
	consumer string
	limit    int
	place    uint64
}

// keptPlace is the place of a consumer's last receive, which got nothing.
type keptPlace struct {
	place uint64
	left  time.Time
}

// join puts a receive in the line: at the place its consumer's last
// receive left empty-handed a moment ago, or at the back.
func (l *receiveLine) join(consumer string, limit int) *lineTicket {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &lineTicket{consumer: consumer, limit: limit}
	now := time.Now()
	for c, k := range l.kept {
		if now.Sub(k.left) >= keepPlace {
			delete(l.kept, c)
		}
	}
	if k, ok := l.kept[consumer]; ok {
		t.place = k.place
		delete(l.kept, consumer)
	} else {
		l.last++
		t.place = l.last
	}
	i := len(l.waiting)
	for i > 0 && l.waiting[i-1].place > t.place {
		i--
	}
	l.waiting = slices.Insert(l.waiting, i, t)
	return t
}

// leave takes t out of the line and wakes the receives behind it. A
// receive that got nothing (served false) keeps its consumer's place for
// the next poll.
func (l *receiveLine) leave(t *lineTicket, served bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.waiting, t); i >= 0 {
		l.waiting = slices.Delete(l.waiting, i, i+1)
	}
	if served {
		delete(l.kept, t.consumer)
	} else {
		if l.kept == nil {
			l.kept = map[string]keptPlace{}
		}
		l.kept[t.consumer] = keptPlace{place: t.place, left: time.Now()}
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
